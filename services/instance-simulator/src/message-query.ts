import { isDeepStrictEqual } from 'node:util';
import { EvolutionError } from './evolution-errors.ts';
import { DEVICE_SOURCES, type StoredMessage } from './message-store.ts';

// BaileysStartupService.fetchMessages (src/api/integrations/channel/whatsapp/
// whatsapp.baileys.service.ts) over the simulator's message store: the same Prisma `where`,
// `orderBy: {messageTimestamp: 'desc'}`, skip/take paging and answer shape. Values Prisma would
// refuse (a non-string id, an unknown source, an invalid date, a fractional page size...) end
// as its express error handler ends them: 500 with the error's message.

export interface MessagePage {
  messages: {
    total: number;
    pages: number;
    /** `query.page` as sent (or 1). */
    currentPage: unknown;
    records: StoredMessage[];
  };
}

export const DEFAULT_PAGE_SIZE = 50;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function prismaRefuses(detail: string): EvolutionError {
  return new EvolutionError(500, 'Internal Server Error', `Invalid \`prisma.message.findMany()\` invocation: ${detail}`);
}

/** A `column: value` condition of a String column: undefined means no condition. */
function columnEquals(where: Json, column: 'id' | 'source' | 'messageType'): ((row: StoredMessage) => boolean) | null {
  const value = where[column];
  if (value === undefined) return null;
  if (typeof value !== 'string') throw prismaRefuses(`Argument \`${column}\` must be a string`);
  if (column === 'source' && !(DEVICE_SOURCES as readonly string[]).includes(value)) {
    throw prismaRefuses(`Invalid value for argument \`source\`. Expected DeviceMessage.`);
  }
  return (row) => row[column] === value;
}

/** `Math.floor(new Date(x).getTime() / 1000)`, which Prisma refuses when NaN. */
function toSeconds(value: unknown, bound: 'gte' | 'lte'): number {
  const seconds = Math.floor(new Date(value as string).getTime() / 1000);
  if (Number.isNaN(seconds)) throw prismaRefuses(`Argument \`${bound}\` is missing or not an Int`);
  return seconds;
}

/** Only when both `gte` and `lte` are truthy does fetchMessages filter on time at all. */
function timestampFilter(where: Json): ((row: StoredMessage) => boolean) | null {
  const range = where.messageTimestamp as Json | undefined;
  if (!range || !range.gte || !range.lte) return null;
  const gte = toSeconds(range.gte, 'gte');
  const lte = toSeconds(range.lte, 'lte');
  return (row) => row.messageTimestamp >= gte && row.messageTimestamp <= lte;
}

/** `{key: {path: [field], equals: value}}`: jsonb equality of that key field. */
const keyFieldEquals = (field: string, value: unknown) => (row: StoredMessage) =>
  isDeepStrictEqual((row.key as unknown as Json)[field], value);

/**
 * The `AND` of key conditions, each present only when its value is truthy: so `fromMe: false`
 * filters nothing (as in Evolution). The trailing `OR: [remoteJid?, remoteJidAlt?]` holds an
 * empty `{}` (matches every row) unless both are given, and then remoteJid is already required
 * by the AND: remoteJidAlt never narrows the result.
 */
function keyFilters(key: Json): ((row: StoredMessage) => boolean)[] {
  const conditions = (['id', 'fromMe', 'remoteJid', 'participant'] as const)
    .filter((field) => Boolean(key[field]))
    .map((field) => keyFieldEquals(field, key[field]));
  const alternatives = [
    key.remoteJid ? keyFieldEquals('remoteJid', key.remoteJid) : () => true,
    key.remoteJidAlt ? keyFieldEquals('remoteJidAlt', key.remoteJidAlt) : () => true,
  ];
  conditions.push((row) => alternatives.some((matches) => matches(row)));
  return conditions;
}

/** Prisma's `take` and `skip` must be integers, `skip` not negative. */
function paging(query: Json): { page: unknown; size: number; skip: number } {
  const size = (query.offset || DEFAULT_PAGE_SIZE) as number;
  const page = query.page || 1;
  if (!Number.isInteger(size) || size < 1) throw prismaRefuses('Argument `take` must be a positive Int');
  const skip = size * (page === 1 ? 0 : (page as number) - 1);
  if (!Number.isInteger(skip) || skip < 0) throw prismaRefuses('Argument `skip` must be a non-negative Int');
  return { page, size, skip };
}

/** fetchMessages over `rows` (one instance's, in storage order); the records are copies. */
export function queryMessages(rows: readonly StoredMessage[], query: Json): MessagePage {
  const where = isObject(query.where) ? query.where : {};
  const conditions = [
    columnEquals(where, 'id'),
    columnEquals(where, 'source'),
    columnEquals(where, 'messageType'),
    timestampFilter(where),
    ...(isObject(where.key) ? keyFilters(where.key) : []),
  ].filter((condition) => condition !== null);
  const matching = rows.filter((row) => conditions.every((matches) => matches(row)));

  const { page, size, skip } = paging(query);
  // Newest first; Postgres leaves ties unordered, the simulator puts the later stored first.
  const ordered = matching
    .map((row, index) => ({ row, index }))
    .sort((a, b) => b.row.messageTimestamp - a.row.messageTimestamp || b.index - a.index)
    .map(({ row }) => row);

  return {
    messages: {
      total: matching.length,
      pages: Math.ceil(matching.length / size),
      currentPage: page,
      records: ordered.slice(skip, skip + size).map((row) => structuredClone(row)),
    },
  };
}
