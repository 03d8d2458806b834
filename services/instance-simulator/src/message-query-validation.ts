import { badRequest } from './evolution-errors.ts';

// The checks of Evolution's messageValidateSchema (src/validate/chat.schema.ts) as
// RouterBroker.dataValidate (src/api/abstract/abstract.router.ts) runs them with the
// `jsonschema` package: every error becomes one string of a BadRequestException, the
// schema's `description` when it has one, otherwise the error's stack without "instance.".
// Keys the schema does not know (page, offset, where.messageTimestamp...) pass unchecked.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const notOfType = (path: string, type: string) => `${path} is not of a type(s) ${type}`;

/** `{type: 'string', minLength: 1}`, reported with `description` when the schema has one. */
function checkNonEmptyString(value: unknown, path: string, problems: string[], description?: string): void {
  if (value === undefined) return;
  if (typeof value !== 'string') problems.push(description ?? notOfType(path, 'string'));
  else if (value.length < 1) problems.push(description ?? `${path} does not meet minimum length of 1`);
}

/**
 * where.key: `if: {propertyNames: {enum: ['fromMe', 'remoteJid', 'id']}}, then: {...}` — the
 * `then` part applies only when every name of the key is one of those three, so a key that
 * also has e.g. `participant` goes unchecked (a quirk of the schema, kept).
 */
function checkKey(key: unknown, problems: string[]): void {
  if (key === undefined) return;
  if (!isObject(key)) {
    problems.push(notOfType('where.key', 'object'));
    return;
  }
  const onlyKnownNames = Object.keys(key).every((name) => ['fromMe', 'remoteJid', 'id'].includes(name));
  if (!onlyKnownNames) return;
  checkNonEmptyString(key.remoteJid, 'where.key.remoteJid', problems, 'The property cannot be empty');
  checkNonEmptyString(key.id, 'where.key.id', problems, 'The property cannot be empty');
  if (key.fromMe !== undefined && typeof key.fromMe !== 'boolean') {
    problems.push(notOfType('where.key.fromMe', 'boolean'));
    problems.push('where.key.fromMe is not one of enum values: true,false');
  }
}

function checkWhere(where: unknown, problems: string[]): void {
  if (where === undefined) return;
  if (!isObject(where)) {
    problems.push(notOfType('where', 'object'));
    return;
  }
  checkNonEmptyString(where._id, 'where._id', problems);
  checkKey(where.key, problems);
  if (where.message !== undefined && !isObject(where.message)) problems.push(notOfType('where.message', 'object'));
  // isNotEmpty('_id'): when `_id` is where's only name, it gets a second, described check.
  const onlyId = Object.keys(where).every((name) => name === '_id');
  if (onlyId && typeof where._id === 'string' && where._id.length < 1) problems.push('The "_id" cannot be empty');
}

/**
 * Throws Evolution's 400 when the findMessages body breaks messageValidateSchema. dataValidate
 * passes the list as one argument (`new BadRequestException(message)`), so the answer's
 * `response.message` is an array holding that list: `[["where is not of a type(s) object"]]`.
 */
export function validateMessageQuery(body: Record<string, unknown>): void {
  const problems: string[] = [];
  checkWhere(body.where, problems);
  if (body.limit !== undefined && !Number.isInteger(body.limit)) problems.push(notOfType('limit', 'integer'));
  if (problems.length > 0) throw badRequest(problems);
}
