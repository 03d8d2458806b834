import type { PacingSettings } from './pacing.ts';
import { sendGapMs } from './pacing.ts';

interface Lane {
  /** Settles when the instance's previous turn has ended (its send answered or failed). */
  tail: Promise<void>;
  /** When the instance may start its next send: the previous one's end plus its gap. */
  freeAt: number;
  waiting: number;
}

/**
 * One send at a time per instance, in the process, with a gap after each (human pacing:
 * docs/decisions.md "Human pacing at delivery"). A turn starts once the instance's previous turn
 * has ended and its gap (derived from that send's message id) has passed; other instances' turns
 * are not affected. Turns of one instance run in the order they were asked for.
 */
export class InstanceLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly pacing: () => PacingSettings, private readonly clock: () => number = Date.now) {}

  /** Runs `send` in the instance's next turn; the gap after it is derived from `messageId`. */
  async turn<T>(instanceId: string, messageId: string, send: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(instanceId);
    if (!lane) {
      lane = { tail: Promise.resolve(), freeAt: 0, waiting: 0 };
      this.lanes.set(instanceId, lane);
    }
    const current = lane;
    const previous = current.tail;
    let release!: () => void;
    current.tail = new Promise<void>((resolve) => (release = resolve));
    current.waiting++;
    try {
      await previous;
      const wait = current.freeAt - this.clock();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return await send();
    } finally {
      current.freeAt = this.clock() + sendGapMs(messageId, this.pacing());
      current.waiting--;
      release();
      // An idle lane whose gap has passed is forgotten at its next use (kept until then: the gap holds).
      if (current.waiting === 0) setTimeout(() => {
        if (current.waiting === 0 && this.lanes.get(instanceId) === current && current.freeAt <= this.clock()) this.lanes.delete(instanceId);
      }, Math.max(0, current.freeAt - this.clock())).unref();
    }
  }

  /** Sends waiting for their turn or under way, all instances. */
  get pending(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.waiting;
    return n;
  }
}
