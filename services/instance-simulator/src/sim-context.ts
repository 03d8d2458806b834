import type { FaultRegistry } from './fault-registry.ts';
import type { InstanceStore } from './instance-store.ts';
import type { Ledger } from './ledger.ts';
import type { NumberDirectory } from './number-directory.ts';
import type { SimEvents } from './sim-events.ts';
import type { ResolvedOptions } from './types.ts';

/** Everything the routes share; one per simulator, so several can run in one process. */
export interface SimContext {
  options: ResolvedOptions;
  store: InstanceStore;
  ledger: Ledger;
  faults: FaultRegistry;
  directory: NumberDirectory;
  events: SimEvents;
  /** Aborted when the server closes, so artificial delays do not hold shutdown. */
  shutdown: AbortSignal;
}
