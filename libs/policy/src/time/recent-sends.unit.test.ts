import { describe, expect, it } from 'vitest';
import { lastSendTo, otherRecipientsOf, rememberSend, type RecentSendsHour } from './recent-sends.ts';

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
