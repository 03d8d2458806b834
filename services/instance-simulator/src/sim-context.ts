import type { FaultRegistry } from './fault-registry.ts';
import type { InstanceStore } from './instance-store.ts';
import type { Ledger } from './ledger.ts';
import type { MessageStore } from './message-store.ts';
import type { NumberDirectory } from './number-directory.ts';
import type { AckScheduler } from './acks.ts';
import type { EvolutionEventLog } from './evolution-events.ts';
import type { Phone } from './phone.ts';
import type { SimEvents } from './sim-events.ts';
import type { WebhookDispatcher } from './webhook-dispatcher.ts';
import type { ResolvedOptions } from './types.ts';

/** Everything the routes share; one per simulator, so several can run in one process. */
export interface SimContext {
  options: ResolvedOptions;
  store: InstanceStore;
  ledger: Ledger;
  /** Evolution's Message table: every message sent or received (POST /chat/findMessages). */
  messages: MessageStore;
  faults: FaultRegistry;
  directory: NumberDirectory;
  events: SimEvents;
  /** Posts Evolution webhook envelopes, with retries; one ordered queue per instance. */
  webhooks: WebhookDispatcher;
  /** Every Evolution event emitted, webhook or not (GET /sim/events). */
  eventLog: EvolutionEventLog;
  acks: AckScheduler;
  /** Contacts and groups on the other side: inbound messages, calls, group changes. */
  phone: Phone;
  /** Aborted when the server closes, so artificial delays do not hold shutdown. */
  shutdown: AbortSignal;
}
