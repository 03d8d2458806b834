// Random policy-log entries for property tests of verify's digests: values that are hard to keep
// apart (quotes, escapes, the digest texts' own separators, lone and paired surrogates), and
// entries derived from others with a few fields changed, as a forged record might be.
import type { SendDecided } from '@gw/events';

export function random(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}
export type Rng = ReturnType<typeof random>;

// Strings that are hard to keep apart: quotes, escapes, separators the digest text uses, digits
// that look like lengths, surrogates alone and in pairs, the replacement character.
export const STRINGS = ['', 'a', 'ab', 'a"b', 'a\\b', '"', '\\', 's1:a', 'j4:null', 'r0:', ':', '1', '12', 'null', '\n', '\u0000', '\ud800', '\udc00', '\ufffd', '😀', '\ud83d', 'é', '{"a":1}'];
export const value = (rng: Rng): unknown => {
  const x = rng.next();
  if (x < 0.55) return rng.pick(STRINGS);
  if (x < 0.7) return rng.pick([0, 1, -1, 1.5, 12, 1e21, Number.NaN, Number.POSITIVE_INFINITY]);
  if (x < 0.8) return null;
  if (x < 0.87) return undefined;
  if (x < 0.93) return rng.pick([true, false]);
  return rng.pick([{ a: 1 }, [1, 'a'], { detail: 'x' }]);
};

/** A recorded entry with random (often odd) values in the replay fields, as a forged record might hold. */
export function randomEntry(rng: Rng, from?: SendDecided): SendDecided {
  const entry: Record<string, unknown> = from ? { ...from, reasons: Array.isArray(from.reasons) ? from.reasons.map((r) => ({ ...r })) : from.reasons } : {};
  const fields = ['correlation_id', 'customer_id', 'instance_id', 'message_id', 'occurred_at', 'recipient', 'message_purpose', 'message_digest', 'decision', 'error_code', 'error_message', 'policy_version', 'partition_chain'];
  for (const field of fields) if (!from || rng.next() < 0.08) entry[field] = value(rng);
  if (!from || rng.next() < 0.15) {
    entry.reasons = rng.next() < 0.1 ? value(rng) : Array.from({ length: rng.int(4) }, () => (rng.next() < 0.05 ? value(rng) : { rule: value(rng), outcome: value(rng), detail: value(rng) }));
  } else if (Array.isArray(entry.reasons) && entry.reasons.length > 0 && rng.next() < 0.2) {
    const r = entry.reasons[rng.int(entry.reasons.length)] as Record<string, unknown>;
    if (r && typeof r === 'object') r[rng.pick(['rule', 'outcome', 'detail'])] = value(rng);
  }
  return entry as unknown as SendDecided;
}
