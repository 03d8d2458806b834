// The decider's fast paths against the plain implementations they replace, over random inputs:
// every optimisation must give exactly the same answer (decisions are replayed and compared).
import { describe, expect, it } from 'vitest';
import { RETENTION } from './config/policy-config.ts';
import { CONTENT_RULES, type ContentRules } from './config/content-rules.ts';
import { URL_SHORTENERS } from './config/url-shorteners.ts';
import { extractHosts } from './content/extract-hosts.ts';
import { normaliseSlow, normaliseText } from './content/normalise-text.ts';
import { scoreContent } from './content/score-content.ts';
import { decide } from './decide.ts';
import { messageDigest } from './digest.ts';
import type { PolicyEvent, SendDecided } from './events.ts';
import { evolve } from './evolve.ts';
import { countQuality, type QualityCounter } from './quality/quality-buckets.ts';
import { initialPolicyState, type CustomerPolicyState, type QualityBucket } from './state.ts';
import { isoTime } from './time/iso-time.ts';
import { otherRecipientsOf, rememberSend, shortDigest, type RecentSendsHour } from './time/recent-sends.ts';
import { computeQuotaWindows, quotaWindows } from './time/quota-windows.ts';
import { createHash } from 'node:crypto';
import { flatJson } from './details-json.ts';

/** A small seeded generator, so a failure can be reproduced. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

// Pieces that exercise every branch: pattern words, hosts, Unicode that NFKC folds, zero-width and
// curly characters, every kind of whitespace, the letters the u flag folds (ſ, K), Turkish İ.
const PIECES = [
  'flash sale', 'Flash SALE', '20% off', '5 % off', 'buy now', 'Shop Now', 'promo code', 'vote for', 're-elect', 'reelect', 'beer', 'wine tasting', 'gun show',
  'vape', 'nicotine', 'porn', 'pornography', 'xxx', 'hot singles', 'white power', 'happy hour', 'free gift', 'hurry', 'deal', 'deals', 'offer ends', "don't miss out",
  'don\u2019t miss this', 'your order 1234', 'has shipped', 'code 482913', 'bit.ly/abc', 'https://t.co/x', 'www.tinyurl.com/y', 'shop.example.com', 'a@b.co', 'e.g.',
  'x.y', 'foo.BAR', 'ＦＬＡＳＨ ｓａｌｅ', 'ﬂash sale', 'ſale', 'ſhop now', '\u212Aill all the', 'İstanbul', 'café', 'naïve', '\u200Bsale', 'sa\u00ADle', 'g\u200Cun',
  '\u2060', '\uFEFF', ' ', '  ', '\t', '\n', '\r\n', '\u00A0', '\u3000', '\u2028', '.', ',', '!', '-', '_', '@', '%', '1', '47', 'ak-47', 'ar15', 'e-cig', '😀', '\uD800',
];

function randomText(rng: ReturnType<typeof random>): string {
  const parts: string[] = [];
  const n = 1 + rng.int(8);
  for (let i = 0; i < n; i++) parts.push(rng.next() < 0.7 ? rng.pick(PIECES) : String.fromCharCode(32 + rng.int(95)));
  return parts.join(rng.next() < 0.8 ? ' ' : '');
}

// The plain implementations the fast paths must agree with (as they were written before them).
function scoreReference(text: string, rules: ContentRules, thresholds: Readonly<Record<string, number>> = {}) {
  const normalised = normaliseSlow(text);
  const scores = [];
  for (const category of rules.categories) {
    const matched = category.patterns.filter((p) => new RegExp(p.source, 'iu').test(normalised));
    if (matched.length === 0) continue;
    scores.push({ reason: category.reason, score: matched.reduce((sum, p) => sum + p.weight, 0), threshold: thresholds[category.reason] ?? rules.defaultThreshold, matched: matched.map((p) => p.id) });
  }
  return scores;
}
const HOST = /(?<![\p{L}\p{N}.@_-])(?:https?:\/\/)?((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\p{L}\p{N}_-])/giu;
const hostsReference = (text: string) => [...new Set([...text.normalize('NFKC').matchAll(HOST)].map((m) => m[1]!.toLowerCase()))];
function countQualityReference(buckets: readonly QualityBucket[] | undefined, at: number, add: Partial<Record<QualityCounter, number>>): QualityBucket[] {
  const HOUR_MS = 3_600_000;
  const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
  const kept = (buckets ?? []).filter((b) => b.hour > hour - RETENTION.qualityHours * HOUR_MS);
  const index = kept.findIndex((b) => b.hour === hour);
  const target = index >= 0 ? { ...kept[index]! } : { hour, judged: 0, violations: 0, accepted: 0, optOuts: 0, delivered: 0, failed: 0 };
  for (const [counter, amount] of Object.entries(add) as [QualityCounter, number][]) target[counter] += amount;
  if (index >= 0) kept[index] = target;
  else {
    kept.push(target);
    kept.sort((a, b) => a.hour - b.hour);
  }
  return kept;
}

/** The fold of a SendDecided as it was written before (a spread per changed field, then the prune). */
function foldReference(state: CustomerPolicyState, event: SendDecided): CustomerPolicyState {
  const HOUR_MS = 3_600_000;
  let next: CustomerPolicyState = { ...state, clock: Math.max(state.clock, event.at) };
  const accepted = event.decision === 'accepted';
  if (accepted || event.errorCode === 'policy_violation') {
    const add = accepted ? { judged: 1, accepted: 1 } : { judged: 1, violations: 1 };
    next = { ...next, quality: { ...next.quality, [event.instanceId]: countQualityReference(next.quality[event.instanceId], event.at, add) } };
  }
  if (accepted) {
    const countOne = (counter: { window: string; used: number }, window: string) => (window > counter.window ? { window, used: 1 } : { window: counter.window, used: counter.used + 1 });
    const previousBucket = next.buckets[event.instanceId];
    next = {
      ...next,
      quota: { day: countOne(next.quota.day, event.quotaWindows.day), month: countOne(next.quota.month, event.quotaWindows.month) },
      buckets: { ...next.buckets, [event.instanceId]: { tokens: event.tokensLeft ?? 0, at: Math.max(previousBucket?.at ?? event.at, event.at) } },
      recent: rememberSend(next.recent, { at: event.at, instanceId: event.instanceId, recipient: event.recipient, digest: shortDigest(event.digest) }, next.clock),
    };
  }
  const clock = next.clock;
  if (clock - next.prunedAt < HOUR_MS) return next;
  const quality: CustomerPolicyState['quality'] = {};
  for (const [instance, buckets] of Object.entries(next.quality)) {
    const kept = buckets.filter((b) => b.hour > clock - RETENTION.qualityHours * HOUR_MS);
    if (kept.length > 0) quality[instance] = kept;
  }
  return {
    ...next,
    prunedAt: clock,
    recent: next.recent.filter((h) => h.hour + HOUR_MS > clock - RETENTION.bulkMs),
    buckets: Object.fromEntries(Object.entries(next.buckets).filter(([, b]) => b.at > clock - RETENTION.idleBucketMs)),
    quality,
  };
}

describe('fast paths of the decider give the same answers as the plain code', () => {
  it('normaliseText (ASCII shortcut) equals the general normalisation', () => {
    const rng = random(1);
    for (let i = 0; i < 20_000; i++) {
      const text = randomText(rng);
      expect(normaliseText(text), JSON.stringify(text)).toBe(normaliseSlow(text));
    }
    for (const text of ['', ' ', '  a  ', 'A  B', ' x', 'x ', '\tx', 'ABC def']) expect(normaliseText(text)).toBe(normaliseSlow(text));
  });

  it('scoreContent (ASCII regexes and the one-scan pre-check) equals scoring with the rules as written', () => {
    const rng = random(2);
    let matchedSome = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = randomText(rng);
      const thresholds: Record<string, number> = i % 3 === 0 ? { promotional_content: 3 } : {};
      const expected = scoreReference(text, CONTENT_RULES, thresholds);
      if (expected.length > 0) matchedSome++;
      expect(scoreContent(text, CONTENT_RULES, thresholds), JSON.stringify(text)).toEqual(expected);
    }
    expect(matchedSome).toBeGreaterThan(5_000); // the comparison covered matches, not only clean texts
  });

  it('scoreContent keeps the u-flag semantics for rules the ASCII shortcut cannot take', () => {
    const rules: ContentRules = {
      version: 'test',
      defaultThreshold: 1,
      categories: [
        { reason: 'letters', patterns: [{ id: 'letter_run', source: String.raw`\p{L}{3}`, weight: 1 }] },
        { reason: 'repeat', patterns: [{ id: 'double', source: String.raw`(a)\1`, weight: 1 }] },
        { reason: 'plain', patterns: [{ id: 'sale', source: String.raw`\bsale\b`, weight: 1 }] },
      ],
    };
    const rng = random(3);
    for (let i = 0; i < 5_000; i++) {
      const text = rng.next() < 0.2 ? `aa ${randomText(rng)}` : randomText(rng);
      expect(scoreContent(text, rules), JSON.stringify(text)).toEqual(scoreReference(text, rules));
    }
    expect(scoreContent('abc sale', rules).map((s) => s.reason)).toEqual(['letters', 'plain']); // \p{L} is a letter, not "p{L}"
  });

  it('extractHosts (no dot-letters, no scan) equals scanning every text', () => {
    const rng = random(4);
    for (let i = 0; i < 20_000; i++) {
      const text = randomText(rng);
      expect(extractHosts(text), JSON.stringify(text)).toEqual(hostsReference(text));
    }
    expect(extractHosts('see bit.ly/x and https://T.CO/y')).toEqual(['bit.ly', 't.co']);
    expect(URL_SHORTENERS.length).toBeGreaterThan(0);
  });

  it('messageDigest is the SHA-256 hex of the normalised body', () => {
    const rng = random(5);
    for (let i = 0; i < 2_000; i++) {
      const text = randomText(rng);
      expect(messageDigest(text)).toBe(createHash('sha256').update(normaliseSlow(text), 'utf8').digest('hex'));
    }
  });

  it('quotaWindows (same day remembered) equals computing every instant, at any offset', () => {
    const rng = random(6);
    let at = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 20_000; i++) {
      at += rng.next() < 0.1 ? -rng.int(3 * 86_400_000) : rng.int(4 * 3_600_000);
      const offset = rng.pick([0, 0, 0, 330, -300, 60, -720, 840]);
      expect(quotaWindows(at, offset)).toEqual(computeQuotaWindows(at, offset));
    }
    // The last instant of a day and the first of the next.
    const end = Date.UTC(2026, 10, 22) - 1;
    expect(quotaWindows(end, 0).day).toBe('2026-11-21');
    expect(quotaWindows(end + 1, 0).day).toBe('2026-11-22');
  });

  it('isoTime equals Date#toISOString and throws as it does', () => {
    const rng = random(7);
    for (let i = 0; i < 10_000; i++) {
      const ms = rng.int(2 ** 42) * (rng.next() < 0.1 ? -1 : 1);
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });

  it('countQuality equals the filter / find / sort version, also on unsorted or stale buckets', () => {
    const rng = random(8);
    const HOUR = 3_600_000;
    const counters: QualityCounter[] = ['judged', 'violations', 'accepted', 'optOuts', 'delivered', 'failed'];
    for (let i = 0; i < 5_000; i++) {
      const now = Date.UTC(2026, 0, 1) + rng.int(1000) * HOUR + rng.int(HOUR);
      const buckets: QualityBucket[] = Array.from({ length: rng.int(30) }, () => {
        const hour = Math.floor(now / HOUR) * HOUR - rng.int(40) * HOUR;
        return { hour, judged: rng.int(5), violations: rng.int(5), accepted: rng.int(5), optOuts: rng.int(5), delivered: rng.int(5), failed: rng.int(5) };
      });
      const add = Object.fromEntries(counters.filter(() => rng.next() < 0.4).map((c) => [c, 1 + rng.int(3)]));
      const input = rng.next() < 0.1 ? undefined : buckets;
      const copy = input?.map((b) => ({ ...b }));
      expect(countQuality(input, now, add)).toEqual(countQualityReference(input, now, add));
      expect(input).toEqual(copy); // never mutated
    }
  });

  it('a SendDecided folded by decide and again by the caller gives the state a fresh fold gives, and never changes its input', () => {
    const rng = random(9);
    const customerId = 'cus_fold';
    const T = Date.UTC(2026, 0, 1);
    let state: CustomerPolicyState = [
      { type: 'CustomerRegistered', customerId, at: T },
      { type: 'PlanChanged', customerId, at: T, planId: 'starter', validUntil: T + 40 * 86_400_000, by: 't', reason: 't' },
      { type: 'LimitsOverridden', customerId, at: T, daily: 50_000, monthly: 500_000, velocity: { burst: 50, refillPerMinute: 300, recipientMinIntervalMs: 1_000 }, grantedBy: 't', reason: 't' },
    ].reduce((s, e) => evolve(s, e as PolicyEvent), initialPolicyState(customerId));
    let at = T;
    for (let i = 0; i < 3_000; i++) {
      at += rng.int(120_000) - (rng.next() < 0.05 ? 600_000 : 0);
      const { events } = decide(
        { commandId: `c${i}`, customerId, instanceId: `ins_${rng.int(3)}`, recipient: `+1415555${String(rng.int(40)).padStart(4, '0')}`, purpose: 'transactional', text: rng.next() < 0.3 ? randomText(rng) : 'Same body', occurredAt: at, source: 'api' },
        state,
      );
      const snapshot = JSON.stringify(state);
      const sendDecided = events[0] as SendDecided;
      const remembered = evolve(state, sendDecided);
      // A fold of an equal event object (not the one decide folded) computes it afresh.
      const fresh = evolve(JSON.parse(snapshot) as CustomerPolicyState, JSON.parse(JSON.stringify(sendDecided)) as SendDecided);
      expect(JSON.stringify(remembered)).toBe(JSON.stringify(fresh));
      expect(JSON.stringify(fresh)).toBe(JSON.stringify(foldReference(JSON.parse(snapshot) as CustomerPolicyState, sendDecided)));
      expect(JSON.stringify(state)).toBe(snapshot);
      state = events.slice(1).reduce(evolve, remembered);
    }
  });

  it('otherRecipientsOf (filters and indexes kept beside the runs) equals reading every send of the window', () => {
    const HOUR_MS = 3_600_000;
    // The lookup as it was first written: every run of the window, every send of each run.
    const reference = (runs: readonly RecentSendsHour[], digest: string, since: number, except: string) => {
      const short = digest.slice(0, 16);
      const seen = new Set<string>();
      for (let h = runs.length - 1; h >= 0; h -= 1) {
        const run = runs[h]!;
        if (run.hour + HOUR_MS <= since) break;
        for (const send of run.sends) if (send.at > since && send.digest === short && send.recipient !== except) seen.add(send.recipient);
        if ((run.sends[0]?.at ?? Infinity) <= since) break;
      }
      return seen.size;
    };
    const rng = random(10);
    const bodies = Array.from({ length: 40 }, (_, i) => createHash('sha256').update(`body ${i}`).digest('hex'));
    for (let round = 0; round < 8; round++) {
      let runs: RecentSendsHour[] = [];
      const history: RecentSendsHour[][] = [];
      let clock = Date.UTC(2026, 0, 1);
      for (let i = 0; i < 1_500; i++) {
        clock += rng.int(round % 2 ? 400_000 : 20_000);
        const at = rng.next() < 0.1 ? clock - rng.int(3 * HOUR_MS) : clock;
        const digest = rng.pick(bodies);
        runs = rememberSend(runs, { at, instanceId: 'ins_1', recipient: `r${rng.int(30)}`, digest: shortDigest(digest) }, clock);
        // Sometimes the array is copied (JSON snapshot), frozen or pruned (a subset of the runs).
        if (rng.next() < 0.02) runs = JSON.parse(JSON.stringify(runs)) as RecentSendsHour[];
        if (rng.next() < 0.01) runs = Object.freeze([...runs]) as RecentSendsHour[];
        if (rng.next() < 0.02) runs = runs.filter((r) => r.hour + HOUR_MS > clock - 6 * HOUR_MS);
        history.push(runs);
        const query = rng.next() < 0.5 ? rng.pick(bodies) : createHash('sha256').update(`new ${i}`).digest('hex');
        const since = clock - rng.pick([HOUR_MS, 6 * HOUR_MS, 24 * HOUR_MS]);
        const except = `r${rng.int(30)}`;
        expect(otherRecipientsOf(runs, query, since, except)).toBe(reference(runs, query, since, except));
        // Older states of the line still answer for themselves (their filters only grew).
        const older = rng.pick(history);
        expect(otherRecipientsOf(older, query, since, except)).toBe(reference(older, query, since, except));
      }
      // What is kept beside the runs is invisible to JSON and to deep equality.
      expect(JSON.parse(JSON.stringify(runs))).toEqual(runs);
      expect(Object.keys(runs)).toEqual(runs.map((_, i) => String(i)));
    }
  });
  it('flatJson writes exactly what JSON.stringify writes, for details and for anything else', () => {
    const rng = random(31);
    // '__proto__' may give the object another prototype, whose toJSON then throws for both.
    const outcome = (write: () => string) => {
      try {
        return write();
      } catch (error) {
        return { threw: (error as Error).message };
      }
    };
    const keys = ['limit', 'used', 'window', 'resets_at', 'override_granted_by', 'tokens', '1', '0', 'a"b', 'k\\', 'ключ', '', 'toJSON', '__proto__'];
    const values: unknown[] = [
      0, -0, 1, -1.5, 1e21, 1e-7, 2 ** 53, NaN, Infinity, -Infinity, '', 'plain', '2026-11-24T00:00:00.000Z', 'quote"', 'back\\slash', 'tab\t', 'nl\n', '\u007f', 'é', '😀', '\ud800', '\u2028',
      null, undefined, true, false, [1, 'a'], { nested: 1 }, new Date(0), () => 1, Symbol('s'),
    ];
    for (let i = 0; i < 20_000; i++) {
      const object: Record<string, unknown> = {};
      const n = rng.int(7);
      for (let k = 0; k < n; k++) object[rng.pick(keys)] = rng.pick(values);
      expect(outcome(() => flatJson(object)), String(i)).toEqual(outcome(() => JSON.stringify(object)));
    }
    // Not a plain object, or properties from elsewhere: still the builtin's text.
    const withProto = Object.assign(Object.create({ inherited: 1 }), { own: 2 }) as Record<string, unknown>;
    const nullProto = Object.assign(Object.create(null), { a: 1 }) as Record<string, unknown>;
    const withToJson = { a: 1, toJSON: () => 'x' };
    const hidden = Object.defineProperty({ a: 1 }, 'b', { value: 2, enumerable: false }) as Record<string, unknown>;
    for (const object of [withProto, nullProto, withToJson, hidden, { [Symbol('s')]: 1, a: 'x' }]) expect(flatJson(object)).toBe(JSON.stringify(object));
  });
});

