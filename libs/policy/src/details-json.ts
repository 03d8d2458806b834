/**
 * JSON.stringify of a rule's details, as the policy log records them. Rules hand out the same
 * frozen details object whenever the details are constant (the module, the purpose, the plan, the
 * content rules' version), so its text is remembered: a frozen object cannot change, which makes
 * the memo exact. Any other object is written out every time (flatJson).
 */
const written = new WeakMap<object, string>();

export function detailsJson(details: Record<string, unknown>): string {
  if (!Object.isFrozen(details)) return flatJson(details);
  let text = written.get(details);
  if (text === undefined) {
    text = flatJson(details);
    written.set(details, text);
  }
  return text;
}

/** Characters JSON.stringify writes as they are inside a string: printable ASCII but the quote and the backslash. */
const PLAIN_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const keyTexts = new Map<string, string>();

/**
 * JSON.stringify(value), written out directly for what most details are: a plain object whose
 * own values are numbers, plain ASCII strings, booleans, null or undefined. On such small objects
 * it is one and a half to three times as fast as the builtin, and a decision writes several.
 * Anything else, or any string needing an escape, is left to JSON.stringify itself, so the text
 * is always the builtin's.
 */
export function flatJson(value: Record<string, unknown>): string {
  if (Object.getPrototypeOf(value) !== Object.prototype) return JSON.stringify(value);
  let out = '{';
  let first = true;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return JSON.stringify(value);
    const v = value[key];
    let text: string;
    if (typeof v === 'number') text = Number.isFinite(v) ? String(v) : 'null';
    else if (typeof v === 'string') {
      if (!PLAIN_STRING.test(v)) return JSON.stringify(value);
      text = `"${v}"`;
    } else if (v === null || typeof v === 'boolean') text = String(v);
    else if (v === undefined) continue;
    else return JSON.stringify(value);
    let keyText = keyTexts.get(key);
    if (keyText === undefined) {
      if (!PLAIN_STRING.test(key) || keyTexts.size >= 4096) return JSON.stringify(value);
      keyTexts.set(key, (keyText = `"${key}":`));
    }
    out += first ? keyText + text : `,${keyText}${text}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * One frozen details object per key, made on first use: rule details that repeat from one
 * decision to the next come from here. `keyOf` must tell apart every argument list that makes
 * different details. Bounded (a long replay sees many plans); starting afresh only costs new objects.
 */
export function constantDetails<T extends Record<string, unknown>, A extends unknown[]>(make: (...args: A) => T, keyOf: (...args: A) => string): (...args: A) => Readonly<T> {
  const made = new Map<string, Readonly<T>>();
  return (...args: A) => {
    const key = keyOf(...args);
    let details = made.get(key);
    if (details === undefined) {
      details = Object.freeze(make(...args));
      if (made.size >= 4096) made.clear();
      made.set(key, details);
    }
    return details;
  };
}
