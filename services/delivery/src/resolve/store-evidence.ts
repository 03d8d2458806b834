import type { Queryable } from '@gw/db';
import { storeHolds } from '@gw/evolution';
import type { ManagerTarget } from '../dispatch/instance-directory.ts';
import { newestSentId } from './open-sends.ts';

/** What is known of an instance's message store: `on` only on positive evidence. */
export type StoreEvidence = { kind: 'on' } | { kind: 'off_or_unknown'; why: string } | { kind: 'unreachable'; detail: string };

/**
 * Whether each instance's manager keeps the messages it sends (Evolution: only with
 * DATABASE_SAVE_DATA_NEW_MESSAGE on), learned from positive evidence and kept per instance for
 * `ttlMs`: its store shows the newest message we know it sent (a sendText that answered 201, or a
 * send the resolver found there). One findMessages call of one record per instance and TTL, and
 * only when an absence has to be judged. No message of the instance known sent, or the store not
 * holding it: not known on. A lookup that failed teaches nothing and is not kept.
 */
export class StoreEvidenceCache {
  private readonly known = new Map<string, { on: boolean; why: string; atMs: number }>();

  constructor(private readonly ttlMs: number, private readonly clock: () => number = Date.now) {}

  /** The store showed a message of ours: it keeps them. */
  sawStored(instanceId: string): void {
    this.known.set(instanceId, { on: true, why: 'found a message of ours', atMs: this.clock() });
  }

  async of(db: Queryable, instanceId: string, target: ManagerTarget, timeoutMs: number): Promise<StoreEvidence> {
    const cached = this.known.get(instanceId);
    if (cached && this.clock() - cached.atMs < this.ttlMs) return cached.on ? { kind: 'on' } : { kind: 'off_or_unknown', why: cached.why };
    const sentId = await newestSentId(db, instanceId);
    if (sentId === null) return this.remember(instanceId, false, 'no message of the instance known sent');
    const held = await storeHolds({ ...target, providerMessageId: sentId, timeoutMs });
    if (held.kind === 'unreachable') return held;
    return this.remember(instanceId, held.kind === 'held', held.kind === 'held' ? 'holds a message known sent' : 'does not hold a message known sent');
  }

  private remember(instanceId: string, on: boolean, why: string): StoreEvidence {
    this.known.set(instanceId, { on, why, atMs: this.clock() });
    return on ? { kind: 'on' } : { kind: 'off_or_unknown', why };
  }
}
