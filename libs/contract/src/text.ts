// One rule for every string that reaches Kafka from outside (the API, PBX, the instance manager's
// webhooks and the CLI): no NUL character (Postgres text and jsonb refuse it, and it stops the
// stage that writes it) and no unpaired surrogate (it is not Unicode, and JSON encoders disagree
// on it), within a bounded length.

/**
 * The same rule as a JSON-schema pattern. Ajv compiles patterns with the "u" flag, under which an
 * unpaired surrogate is a code point of its own in D800-DFFF and a pair is one astral code point.
 */
export const SAFE_TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';

export const SAFE_TEXT_RULE = 'without NUL characters or unpaired surrogates';

/** What is wrong with a string from outside, or null when it may go in. */
export function textProblem(value: string, maxLength: number): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (!value.isWellFormed()) return 'contains an unpaired surrogate';
  if (value.length > maxLength) return `is longer than ${maxLength} characters`;
  return null;
}

/** A JSON-schema string property with the rule and a length bound (minLength 1 unless told). */
export function safeString(maxLength: number, description: string, minLength = 1) {
  return { type: 'string', ...(minLength > 0 ? { minLength } : {}), maxLength, pattern: SAFE_TEXT_PATTERN, description } as const;
}

/**
 * How deep a JSON value from outside may nest (objects and arrays inside the outermost one).
 * JSON.parse takes any depth, but walking the value (here, JSON.stringify, a consumer) recurses,
 * and a body of a few hundred KB of "[" overflows the stack; nothing legitimate nests this deep.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The first string anywhere in a parsed JSON value that breaks the rule (key or value), or the
 * first object or array nested deeper than MAX_JSON_DEPTH, with its path, or null. Breadth is
 * bounded by the body size limit of the route that parsed it.
 */
export function findUnsafeText(value: unknown, maxLength: number, path = '', depth = 0): { path: string; problem: string } | null {
  if (typeof value === 'string') {
    const problem = textProblem(value, maxLength);
    return problem ? { path: path || '(root)', problem } : null;
  }
  if (typeof value === 'object' && value !== null && depth > MAX_JSON_DEPTH) {
    return { path: path || '(root)', problem: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeText(value[i], maxLength, `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const keyProblem = textProblem(key, 256);
      if (keyProblem) return { path: `${path}.(key)`, problem: keyProblem };
      const found = findUnsafeText(inner, maxLength, path ? `${path}.${key}` : key, depth + 1);
      if (found) return found;
    }
  }
  return null;
}
