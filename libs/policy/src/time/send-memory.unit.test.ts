import { describe, expect, it } from 'vitest';
import { emptySendMemory, lastSendTo, otherRecipientsOf, rememberSend, sweepSends, type RememberedSend, type SendMemory } from './send-memory.ts';

const H = 3_600_000;
const DIGESTS = ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb', 'cccccccccccccccc', 'dddddddddddddddd'].map((d) => `${d}${'0'.repeat(48)}`);

/**
 * What the rules are to read, straight off every accepted send, as state version 5 kept them: a
 * list that forgot whole UTC hours ending at or before clock − 24 h whenever a send was added.
 */
class Brute {
  sends: RememberedSend[] = [];
  add(send: RememberedSend, clock: number): void {
    const kept = (at: number) => Math.floor(at / H) * H + H > clock - 24 * H;
    this.sends = [...this.sends, send].filter((s) => kept(s.at));
  }
  otherRecipientsOf(digest: string, since: number, except: string): number {
    return new Set(this.sends.filter((s) => s.at > since && s.digest.slice(0, 16) === digest.slice(0, 16) && s.recipient !== except).map((s) => s.recipient)).size;
  }
  lastSendTo(instanceId: string, recipient: string, since: number): number | undefined {
    const times = this.sends.filter((s) => s.at > since && s.instanceId === instanceId && s.recipient === recipient).map((s) => s.at);
    return times.length === 0 ? undefined : Math.max(...times);
  }
}

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

describe('send memory', () => {
  it('answers the recipient interval and the bulk count of a body as the list of every remembered send does', () => {
    let memory = emptySendMemory();
    for (const [at, recipient, digest] of [[1_000, 'a', 0], [2_000, 'b', 0], [3_000, 'b', 0], [4_000, 'c', 1]] as const) {
      memory = rememberSend(memory, { at, recipient, digest: DIGESTS[digest]!, instanceId: 'ins_1' }, at);
    }
    expect(otherRecipientsOf(memory, DIGESTS[0]!, 0, 'z')).toBe(2);
    expect(otherRecipientsOf(memory, DIGESTS[0]!, 0, 'a')).toBe(1);
    expect(otherRecipientsOf(memory, DIGESTS[0]!, 2_500, 'z')).toBe(1);
    expect(lastSendTo(memory, 'ins_1', 'b', 0)).toBe(3_000);
    expect(lastSendTo(memory, 'ins_1', 'b', 3_000)).toBeUndefined();
    expect(lastSendTo(memory, 'ins_2', 'b', 0)).toBeUndefined();
  });

  it('forgets a whole hour once it ends 24 h before the clock of an accepted send, not before', () => {
    let memory = rememberSend(emptySendMemory(), { at: 10 * H + 5, recipient: 'a', digest: DIGESTS[0]!, instanceId: 'i' }, 10 * H + 5);
    memory = rememberSend(memory, { at: 35 * H - 1, recipient: 'b', digest: DIGESTS[1]!, instanceId: 'i' }, 35 * H - 1);
    expect(lastSendTo(memory, 'i', 'a', 0)).toBe(10 * H + 5);
    memory = rememberSend(memory, { at: 35 * H, recipient: 'b', digest: DIGESTS[1]!, instanceId: 'i' }, 35 * H);
    expect(lastSendTo(memory, 'i', 'a', 0)).toBeUndefined();
    expect(otherRecipientsOf(memory, DIGESTS[0]!, 0, 'z')).toBe(0);
  });

  it('given random traffic with late sends, gaps, sweeps and snapshots, answers every lookup as the list did', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      let memory: SendMemory = emptySendMemory();
      const brute = new Brute();
      let clock = 0;
      for (let i = 0; i < 1_500; i += 1) {
        const gap = next() < 0.05 ? next() * 6 * H : next() * 60_000;
        const late = next() < 0.1 ? next() * 2 * H : 0;
        clock += gap;
        const send = { at: Math.round(clock - late), recipient: `+1${Math.floor(next() * 40)}`, digest: DIGESTS[Math.floor(next() * DIGESTS.length)]!, instanceId: `ins_${Math.floor(next() * 3)}` };
        memory = rememberSend(memory, send, clock);
        brute.add(send, clock);
        // The hourly sweep and a snapshot round-trip free memory and change no answer.
        if (next() < 0.05) memory = sweepSends(memory, clock);
        if (next() < 0.02) memory = JSON.parse(JSON.stringify(memory)) as SendMemory;
        const since = clock - next() * 26 * H;
        const digest = DIGESTS[Math.floor(next() * DIGESTS.length)]!;
        const except = `+1${Math.floor(next() * 40)}`;
        expect(otherRecipientsOf(memory, digest, since, except)).toBe(brute.otherRecipientsOf(digest, since, except));
        const intervalStart = clock - next() * (next() < 0.5 ? 600_000 : 30 * H);
        expect(lastSendTo(memory, send.instanceId, send.recipient, intervalStart)).toBe(brute.lastSendTo(send.instanceId, send.recipient, intervalStart));
        const other = `+1${Math.floor(next() * 40)}`;
        expect(lastSendTo(memory, send.instanceId, other, intervalStart)).toBe(brute.lastSendTo(send.instanceId, other, intervalStart));
      }
    }
  });

  it('never changes a memory it was given', () => {
    const memory = rememberSend(emptySendMemory(), { at: H, recipient: 'a', digest: DIGESTS[0]!, instanceId: 'i' }, H);
    const frozen = JSON.stringify(memory);
    rememberSend(memory, { at: 2 * H, recipient: 'b', digest: DIGESTS[0]!, instanceId: 'i' }, 2 * H);
    rememberSend(memory, { at: H + 1, recipient: 'a', digest: DIGESTS[0]!, instanceId: 'i' }, 30 * H);
    sweepSends(memory, 30 * H);
    expect(JSON.stringify(memory)).toBe(frozen);
  });
});
