import { describe, expect, it } from 'vitest';
import { lastSendTo, otherRecipientsOf, rememberSend, RUN_SIZE, type RecentSend, type RecentSendsHour } from './recent-sends.ts';

const H = 3_600_000;
const send = (at: number, recipient: string, digest = 'aaaaaaaaaaaaaaaa', instanceId = 'ins_1') => ({ at, recipient, digest, instanceId });

describe('recent sends memory', () => {
  it('keeps each hour sorted even when a late send arrives', () => {
    let hours: RecentSendsHour[] = [];
    for (const s of [send(10 * H + 5_000, 'a'), send(10 * H + 9_000, 'b'), send(10 * H + 7_000, 'c')]) hours = rememberSend(hours, s, 10 * H + 9_000);
    expect(hours[0]!.sends.map((s) => s.recipient)).toEqual(['a', 'c', 'b']);
    expect(lastSendTo(hours, 'ins_1', 'c', 10 * H + 6_000)).toBe(10 * H + 7_000);
  });

  it('forgets whole hours past the 24 h retention', () => {
    let hours: RecentSendsHour[] = [];
    hours = rememberSend(hours, send(0, 'a'), 0);
    hours = rememberSend(hours, send(25 * H, 'b'), 25 * H);
    expect(hours.map((h) => h.hour)).toEqual([25 * H]);
  });

  it('counts distinct other recipients of a body inside the window only', () => {
    let hours: RecentSendsHour[] = [];
    for (const s of [send(1_000, 'a'), send(2_000, 'b'), send(3_000, 'b'), send(4_000, 'c', 'bbbbbbbbbbbbbbbb')]) hours = rememberSend(hours, s, s.at);
    expect(otherRecipientsOf(hours, 'aaaaaaaaaaaaaaaa-full-digest', 0, 'z')).toBe(2);
    expect(otherRecipientsOf(hours, 'aaaaaaaaaaaaaaaa-full-digest', 0, 'a')).toBe(1);
    expect(otherRecipientsOf(hours, 'aaaaaaaaaaaaaaaa-full-digest', 1_500, 'z')).toBe(1);
  });
});

/** What a lookup means, read straight off every remembered send. */
const everySend = (runs: RecentSendsHour[]) => runs.flatMap((r) => r.sends);
const brute = {
  otherRecipientsOf: (runs: RecentSendsHour[], digest: string, since: number, except: string) =>
    new Set(everySend(runs).filter((s) => s.at > since && s.digest === digest.slice(0, 16) && s.recipient !== except).map((s) => s.recipient)).size,
  lastSendTo: (runs: RecentSendsHour[], instanceId: string, recipient: string, since: number) =>
    everySend(runs).filter((s) => s.at > since && s.instanceId === instanceId && s.recipient === recipient).at(-1)?.at,
};

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('recent sends in runs', () => {
  it('given a busy hour, when more than RUN_SIZE sends arrive, then the hour is split into runs and only the open run grows', () => {
    let runs: RecentSendsHour[] = [];
    for (let i = 0; i < RUN_SIZE * 2 + 1; i += 1) runs = rememberSend(runs, send(10 * H + i, `r${i}`), 10 * H + i);
    expect(runs.map((r) => [r.hour, r.sends.length])).toEqual([[10 * H, RUN_SIZE], [10 * H, RUN_SIZE], [10 * H, 1]]);
    expect(runs.flatMap((r) => r.sends).map((s) => s.at)).toEqual(Array.from({ length: RUN_SIZE * 2 + 1 }, (_, i) => 10 * H + i));
  });

  it('given a closed run, when a late send belongs inside it, then it is inserted in time order there', () => {
    let runs: RecentSendsHour[] = [];
    for (let i = 0; i < RUN_SIZE + 2; i += 1) runs = rememberSend(runs, send(10 * H + i * 10, `r${i}`), 10 * H + i * 10);
    runs = rememberSend(runs, send(10 * H + 15, 'late'), 10 * H + 400);
    expect(runs[0]!.sends.slice(0, 4).map((s) => s.recipient)).toEqual(['r0', 'r1', 'late', 'r2']);
    expect(runs.flatMap((r) => r.sends).every((s, i, all) => i === 0 || all[i - 1]!.at <= s.at)).toBe(true);
  });

  it('given a version-2 snapshot (one big run per hour), when sends are added, then lookups still read every send', () => {
    const big: RecentSend[] = Array.from({ length: 100 }, (_, i) => send(10 * H + i, `r${i % 7}`, i % 3 === 0 ? 'aaaaaaaaaaaaaaaa' : 'bbbbbbbbbbbbbbbb'));
    let runs: RecentSendsHour[] = JSON.parse(JSON.stringify([{ hour: 10 * H, sends: big }]));
    for (let i = 100; i < 140; i += 1) runs = rememberSend(runs, send(10 * H + i, `r${i % 11}`, 'aaaaaaaaaaaaaaaa'), 10 * H + i);
    expect(runs[0]!.sends).toHaveLength(100);
    for (const since of [10 * H - 1, 10 * H + 50, 10 * H + 120]) {
      expect(otherRecipientsOf(runs, 'aaaaaaaaaaaaaaaa', since, 'r1')).toBe(brute.otherRecipientsOf(runs, 'aaaaaaaaaaaaaaaa', since, 'r1'));
    }
  });

  it('given random traffic with late sends and gaps, keeps every send of the retention sorted, and lookups read them all', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      let runs: RecentSendsHour[] = [];
      let kept: RecentSend[] = [];
      let clock = 0;
      const digests = ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb', 'cccccccccccccccc', `${'d'.repeat(16)}`];
      for (let i = 0; i < 1_500; i += 1) {
        const gap = next() < 0.05 ? next() * 6 * H : next() * 60_000;
        const late = next() < 0.1 ? next() * 2 * H : 0;
        clock += gap;
        const s = send(Math.round(clock - late), `+1${Math.floor(next() * 40)}`, digests[Math.floor(next() * digests.length)]!, `ins_${Math.floor(next() * 3)}`);
        runs = rememberSend(runs, s, clock);
        // Whole hours past the retention are forgotten; every other send is there, in time order.
        const oldestHourKept = (at: number) => Math.floor(at / H) * H + H > clock - 24 * H;
        kept = [...kept, s].filter((k) => oldestHourKept(k.at)).sort((a, b) => a.at - b.at);
        expect(everySend(runs).map((k) => k.at)).toEqual(kept.map((k) => k.at));
        const since = clock - next() * 3 * H;
        const digest = `${digests[Math.floor(next() * digests.length)]!}-rest-of-the-digest`;
        const except = `+1${Math.floor(next() * 40)}`;
        expect(otherRecipientsOf(runs, digest, since, except)).toBe(brute.otherRecipientsOf(runs, digest, since, except));
        const intervalStart = clock - next() * 600_000;
        expect(lastSendTo(runs, s.instanceId, s.recipient, intervalStart)).toBe(brute.lastSendTo(runs, s.instanceId, s.recipient, intervalStart));
      }
    }
  });

  it('tolerates an empty run in a stored snapshot', () => {
    const runs: RecentSendsHour[] = [{ hour: 10 * H, sends: [send(10 * H + 1, 'a')] }, { hour: 10 * H, sends: [] }];
    expect(otherRecipientsOf(runs, 'aaaaaaaaaaaaaaaa', 0, 'z')).toBe(1);
    expect(rememberSend(runs, send(10 * H + 2, 'b'), 10 * H + 2).flatMap((r) => r.sends).map((s) => s.recipient)).toEqual(['a', 'b']);
  });
});
