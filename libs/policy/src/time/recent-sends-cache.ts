import type { RecentSend } from './recent-sends.ts';

/**
 * A cache for the bulk check, owned by whoever decides many commands in a row (the policy
 * consumer, the compliance replay, a benchmark) and passed to decide. It remembers, per run of
 * sends, which of its sends carry which body. A run's sends array never changes once it is in a
 * state (rememberSend copies what it changes), so an index made for an array stays true for it,
 * and the WeakMap lets it go with the array. Deciding with or without a cache gives the same
 * decisions (tested); the cache only spares reading every send of the window.
 */
export class RecentSendsCache {
  private readonly byBody = new WeakMap<readonly RecentSend[], Map<string, RecentSend[]>>();

  /** The sends of a run with this short digest, in time order. */
  sendsWithBody(sends: readonly RecentSend[], shortDigest: string): readonly RecentSend[] {
    let index = this.byBody.get(sends);
    if (!index) {
      index = new Map();
      for (const send of sends) {
        const group = index.get(send.digest);
        if (group) group.push(send);
        else index.set(send.digest, [send]);
      }
      this.byBody.set(sends, index);
    }
    return index.get(shortDigest) ?? [];
  }
}
