// How the dashboard's forms are declared: a JSON schema per form body with its CSRF token and
// bounded fields (the handler says in words what is wrong), and the email pattern the forms accept.
// Every form field and query value also passes the API's own text rule (`textProblem` of
// @gw/contract: no NUL character, no unpaired surrogate, a bounded length) once, centrally
// (`checkFormInput`, a preValidation hook of the dashboard scope): a value Postgres or Kafka
// would refuse is answered 400 with a page that says which field, never a 500.
import type { FastifyRequest } from 'fastify';
import { textProblem } from '@gw/contract';
import { PageError } from './sessions/guards.ts';

export const text = (maxLength: number) => ({ type: 'string', maxLength });

/** A form body: its CSRF token and these fields. */
export const form = (properties: Record<string, object>, required: string[] = []) => ({ body: { type: 'object', properties: { _csrf: text(200), ...properties }, required } });

/** An email address as far as a form can tell (the mail itself is the real check). */
export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/;

/** The longest value any dashboard field takes (a form's own schema bounds each field tighter). */
export const FORM_FIELD_MAX = 8192;
/** The longest field name, and the most values one name may carry (checkboxes). */
const FIELD_NAME_MAX = 100;
const VALUES_PER_FIELD_MAX = 200;

/** What is wrong with a form body or query (name and problem), or null. */
export function formInputProblem(values: unknown): { field: string | null; problem: string } | null {
  if (values === null || values === undefined || typeof values !== 'object') return null;
  for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
    const nameProblem = textProblem(name, FIELD_NAME_MAX);
    if (nameProblem) return { field: null, problem: `has a field name that ${nameProblem}` };
    const list = Array.isArray(value) ? value : [value];
    if (list.length > VALUES_PER_FIELD_MAX) return { field: name, problem: `has more than ${VALUES_PER_FIELD_MAX} values` };
    for (const item of list) {
      if (typeof item !== 'string') continue;
      const problem = textProblem(item, FORM_FIELD_MAX);
      if (problem) return { field: name, problem };
    }
  }
  return null;
}

/**
 * A route option for the search pages (/messages, /inbound-logs, a message's timeline) that check
 * every query value and path segment themselves and answer better than this check would: the
 * search form again with what is wrong, a value ignored with a notice, or the 404 of an unknown
 * id. Their form bodies (none today) are still checked here.
 */
export const CHECKS_OWN_QUERY = { checksOwnQuery: true } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** See CHECKS_OWN_QUERY. */
    checksOwnQuery?: boolean;
  }
}

const checksOwnQuery = (request: FastifyRequest) => request.routeOptions.config?.checksOwnQuery === true;

/** The dashboard's boundary check of every request's form fields and query values (a preValidation hook). */
export async function checkFormInput(request: FastifyRequest): Promise<void> {
  const own = checksOwnQuery(request);
  const found = formInputProblem(request.body) ?? (own ? null : (formInputProblem(request.query) ?? formInputProblem(request.params)));
  if (!found) return;
  const what = found.field === null ? 'The form' : `The field “${found.field}”`;
  throw new PageError(400, 'Not accepted', `${what} ${found.problem}. Go back, correct it and send the form again.`);
}
