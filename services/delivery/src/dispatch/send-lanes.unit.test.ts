import { describe, expect, it } from 'vitest';
import type { PacingSettings } from './pacing.ts';
import { sendGapMs } from './pacing.ts';
import { InstanceLanes } from './send-lanes.ts';

const PACING: PacingSettings = { typingMsPerChar: 0, typingMinMs: 0, typingMaxMs: 0, typingJitter: 0, typingSkipPurposes: [], gapMs: 100, gapJitter: 0.5 };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('instance lanes', () => {
  it('runs one send at a time per instance, in order, each at least its predecessor\'s gap after it ended', async () => {
    const lanes = new InstanceLanes(() => PACING);
    const log: Array<{ id: string; start: number; end: number }> = [];
    const send = (id: string) => lanes.turn('ins_a', id, async () => {
      const start = Date.now();
      await pause(30);
      log.push({ id, start, end: Date.now() });
      return id;
    });
    expect(await Promise.all([send('msg_1'), send('msg_2'), send('msg_3')])).toEqual(['msg_1', 'msg_2', 'msg_3']);
    expect(log.map((l) => l.id)).toEqual(['msg_1', 'msg_2', 'msg_3']);
    for (let i = 1; i < log.length; i++) {
      // Timers may fire a millisecond early.
      expect(log[i]!.start - log[i - 1]!.end).toBeGreaterThanOrEqual(sendGapMs(log[i - 1]!.id, PACING) - 2);
    }
  });

  it('holds up no other instance, and keeps the gap after a send that failed', async () => {
    const lanes = new InstanceLanes(() => PACING);
    const started = Date.now();
    const failing = lanes.turn('ins_a', 'msg_f', async () => {
      await pause(50);
      throw new Error('manager down');
    });
    const next = lanes.turn('ins_a', 'msg_n', async () => Date.now());
    const other = await lanes.turn('ins_b', 'msg_o', async () => Date.now());
    expect(other - started).toBeLessThan(40);
    await expect(failing).rejects.toThrow('manager down');
    expect((await next) - started).toBeGreaterThanOrEqual(50 + sendGapMs('msg_f', PACING) - 2);
    expect(lanes.pending).toBe(0);
  });
});
