/**
 * JSON.stringify of a rule's details, as the policy log records them. Rules hand out the same
 * frozen details object whenever the details are constant (the module, the purpose, the plan, the
 * content rules' version), so its text is remembered: a frozen object cannot change, which makes
 * the memo exact. Any other object is written out every time.
 */
const written = new WeakMap<object, string>();

export function detailsJson(details: Record<string, unknown>): string {
  if (!Object.isFrozen(details)) return JSON.stringify(details);
  let text = written.get(details);
  if (text === undefined) {
    text = JSON.stringify(details);
    written.set(details, text);
  }
  return text;
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
