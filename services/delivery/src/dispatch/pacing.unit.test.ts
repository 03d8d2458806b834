import { describe, expect, it } from 'vitest';
import { longestCallMs, sendGapMs, typingDelayMs, unitOf, type PacingSettings } from './pacing.ts';

// The defaults (libs/config settings.unit.test.ts checks config.delivery.pacing holds them).
const DEFAULTS: PacingSettings = { typingMsPerChar: 300, typingMinMs: 800, typingMaxMs: 12_000, typingJitter: 0.2, typingSkipPurposes: ['authentication'], gapMs: 1_000, gapJitter: 0.5 };
const ids = Array.from({ length: 400 }, (_, i) => `msg_${i.toString(36)}-pacing`);

describe('human pacing maths', () => {
  it('derives its jitter from the message id: the same id paces the same, different ids spread over [0, 1)', () => {
    expect(unitOf('msg_a', 'typing')).toBe(unitOf('msg_a', 'typing'));
    expect(unitOf('msg_a', 'typing')).not.toBe(unitOf('msg_a', 'gap'));
    const units = ids.map((id) => unitOf(id, 'typing'));
    expect(Math.min(...units)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...units)).toBeLessThan(1);
    // Spread, not clustered: each tenth of the range gets some of 400 ids.
    for (let tenth = 0; tenth < 10; tenth++) expect(units.filter((u) => Math.floor(u * 10) === tenth).length).toBeGreaterThan(15);
  });

  it('scales typing to the text within ±20 %', () => {
    const text = 'x'.repeat(20); // 6 s before jitter
    const delays = ids.map((id) => typingDelayMs(text, id, 'transactional', DEFAULTS));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(4_800);
    expect(Math.max(...delays)).toBeLessThanOrEqual(7_200);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(2_000);
    expect(typingDelayMs(text, 'msg_same', 'transactional', DEFAULTS)).toBe(typingDelayMs(text, 'msg_same', 'transactional', DEFAULTS));
    // Characters, not UTF-16 units: an emoji is one character typed.
    expect(typingDelayMs('😀'.repeat(20), 'msg_same', 'transactional', DEFAULTS)).toBe(typingDelayMs(text, 'msg_same', 'transactional', DEFAULTS));
  });

  it('holds typing within its bounds: at least 0.8 s for a short text, at most 12 s for a long one', () => {
    expect(ids.map((id) => typingDelayMs('ok', id, 'reminder', DEFAULTS)).every((ms) => ms === 800)).toBe(true);
    expect(ids.map((id) => typingDelayMs('x'.repeat(4096), id, 'reminder', DEFAULTS)).every((ms) => ms === 12_000)).toBe(true);
  });

  it('skips typing for the configured purposes, and altogether with a max of 0', () => {
    expect(typingDelayMs('Your code is 123456', 'msg_a', 'authentication', DEFAULTS)).toBe(0);
    expect(typingDelayMs('Your code is 123456', 'msg_a', 'authentication', { ...DEFAULTS, typingSkipPurposes: [] })).toBeGreaterThan(0);
    expect(typingDelayMs('Your code is 123456', 'msg_a', 'reminder', { ...DEFAULTS, typingMaxMs: 0 })).toBe(0);
  });

  it('keeps at least the gap between sends, lengthened by up to half of it', () => {
    const gaps = ids.map((id) => sendGapMs(id, DEFAULTS));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1_500);
    expect(Math.max(...gaps) - Math.min(...gaps)).toBeGreaterThan(400);
    expect(sendGapMs('msg_a', { ...DEFAULTS, gapMs: 0 })).toBe(0);
  });

  it('gives a call its timeout beyond the longest typing delay', () => {
    expect(longestCallMs({ sendTimeoutMs: 5_000, pacing: DEFAULTS })).toBe(17_000);
  });
});
