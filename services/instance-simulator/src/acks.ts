import type { InstanceStore } from './instance-store.ts';
import type { SimEvents } from './sim-events.ts';
import type { LedgerEntry, MessageStatus, ResolvedAckDelays, SimInstance } from './types.ts';

// After a send is accepted (send.message, status PENDING), WhatsApp's receipts turn into
// Baileys messages.update events: SERVER_ACK (the server took it), DELIVERY_ACK (the
// recipient's phone got it), READ (blue ticks). The scheduler replays that over time;
// each delay counts from the send, and a later step never overtakes an earlier one.

export class AckScheduler {
  private delays: ResolvedAckDelays;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly failing = new Set<string>();
  private readonly statuses = new Map<string, MessageStatus>();

  constructor(
    initial: ResolvedAckDelays,
    private readonly events: SimEvents,
    private readonly store: InstanceStore,
  ) {
    this.delays = { ...initial };
    events.on('send.message', (instance, entry) => this.schedule(instance, entry));
  }

  getDelays(): ResolvedAckDelays {
    return { ...this.delays };
  }

  setDelays(delays: Partial<ResolvedAckDelays>): ResolvedAckDelays {
    this.delays = { ...this.delays, ...delays };
    return this.getDelays();
  }

  /** The next send.message of this message id ends in ERROR instead of being acked. */
  failMessage(messageId: string): void {
    this.failing.add(messageId);
  }

  statusOf(messageId: string): MessageStatus | undefined {
    return this.statuses.get(messageId);
  }

  /** Stops every pending ack (server shutdown). */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  clear(): void {
    this.statuses.clear();
  }

  private schedule(instance: SimInstance, entry: LedgerEntry): void {
    this.statuses.set(entry.id, 'PENDING');
    if (this.failing.delete(entry.id)) {
      this.at(this.delays.serverAckMs ?? 0, instance, entry, 'ERROR');
      return;
    }
    const steps: [number | null, MessageStatus][] = [
      [this.delays.serverAckMs, 'SERVER_ACK'],
      [this.delays.deliveryMs, 'DELIVERY_ACK'],
      [this.delays.readMs, 'READ'],
    ];
    let previous = 0;
    for (const [delay, status] of steps) {
      if (delay === null) break;
      previous = Math.max(previous, delay);
      this.at(previous, instance, entry, status);
    }
  }

  private at(delayMs: number, instance: SimInstance, entry: LedgerEntry, status: MessageStatus): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      // A deleted instance has no socket left to receive receipts on.
      if (this.store.get(instance.instanceName) !== instance) return;
      this.statuses.set(entry.id, status);
      this.events.emit('message.status', instance, entry, status);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }
}
