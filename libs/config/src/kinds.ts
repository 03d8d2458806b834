// The kinds of setting an environment variable can hold, as zod schemas over the raw string (or
// its absence). Each parses to its typed value or fails with a message naming the variable (the
// key it is declared under, zod's path) and what it got; an empty value counts as unset unless a
// kind says otherwise.
import { z } from 'zod';

type Raw = string | undefined;

const nameOf = (ctx: z.RefinementCtx) => String(ctx.path[ctx.path.length - 1]);
const unset = (raw: Raw): raw is undefined | '' => raw === undefined || raw === '';

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: z.ZodIssueCode.custom, message, fatal: true });
  return z.NEVER as never;
}

function toInt(raw: string, ctx: z.RefinementCtx): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) fail(ctx, `Environment variable ${nameOf(ctx)} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** A non-negative integer (Number's reading: "1e3" is 1000), `fallback` when unset. */
export const int = (fallback: number) =>
  z.string().optional().transform((raw, ctx) => (unset(raw) ? fallback : toInt(raw, ctx)));

/** A non-negative integer or nothing: its default is worked out from other settings. */
export const optionalInt = () =>
  z.string().optional().transform((raw, ctx) => (unset(raw) ? undefined : toInt(raw, ctx)));

/** Text, `fallback` when unset or empty. */
export const str = (fallback: string) => z.string().optional().transform((raw) => (unset(raw) ? fallback : raw));

/** Text or nothing (unset or empty). */
export const optionalStr = () => z.string().optional().transform((raw) => (unset(raw) ? undefined : raw));

/** Text trimmed, or nothing when that leaves it empty. */
export const optionalTrimmed = () => z.string().optional().transform((raw) => raw?.trim() || undefined);

/** Comma-separated, items trimmed and empty ones dropped; `fallback` when unset or blank. */
export const list = (fallback: string[]) =>
  z.string().optional().transform((raw) => (raw === undefined || raw.trim() === '' ? fallback : splitList(raw)));

const splitList = (raw: string) => raw.split(',').map((item) => item.trim()).filter((item) => item !== '');

/** Comma-separated non-negative whole numbers, at least one. */
export const intList = (fallback: number[]) =>
  z.string().optional().transform((raw, ctx) => {
    const values = raw === undefined || raw.trim() === '' ? fallback : splitList(raw).map(Number);
    if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 0)) {
      fail(ctx, `Environment variable ${nameOf(ctx)} must be a comma-separated list of non-negative whole numbers, got "${raw}"`);
    }
    return values;
  });

/** A number in [0, 1). */
export const ratio = (fallback: number) =>
  z.string().optional().transform((raw, ctx) => {
    if (unset(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value >= 1) fail(ctx, `Environment variable ${nameOf(ctx)} must be a number in [0, 1), got "${raw}"`);
    return value;
  });

/** One of the given words, `fallback` when unset or empty. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.string().optional().transform((raw, ctx): T[number] => {
    const value = unset(raw) ? fallback : raw;
    if (!values.includes(value)) fail(ctx, `Environment variable ${nameOf(ctx)} must be ${values.join(' or ')}, got "${value}"`);
    return value;
  });

/** On only when exactly `true`; anything else is off. */
export const flag = () => z.string().optional().transform((raw) => raw === 'true');

/** `true` or not, or nothing when unset or empty (its default is worked out from other settings). */
export const optionalFlag = () => z.string().optional().transform((raw) => (unset(raw) ? undefined : raw === 'true'));

/**
 * A secret with a local default (applied where the settings are assembled): unset is nothing; set
 * but blank (an unfilled deployment secret) is refused rather than silently becoming that default.
 */
export const secret = (hint: string) =>
  z.string().optional().transform((raw, ctx) => {
    if (raw === undefined) return undefined;
    if (raw.trim() === '') fail(ctx, `${nameOf(ctx)} is set but empty: ${hint}`);
    return raw;
  });

/** The first issue of a failed parse, as the one error loadConfig throws. */
export function firstIssue(error: z.ZodError): Error {
  return new Error(error.issues[0]?.message ?? 'invalid configuration');
}
