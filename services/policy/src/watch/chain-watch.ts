import { Counter, Gauge, type Registry } from 'prom-client';
import { checkChains, Findings, type ChainPosition } from '@gw/compliance';
import { readSnapshot, type Pool } from '@gw/db';
import type { Logger } from '@gw/observability';

export interface ChainWatchSettings {
  /** A check walks every chain from its first entry when this long has passed since the last such walk. */
  fullEveryMs: number;
}

/**
 * The policy log's hash chains in Postgres, checked while the service runs (docs/operations.md,
 * PolicyChainVerifyFailing), by the check `gatewayctl policy-log verify` runs on them
 * (@gw/compliance checkChains). Each check reads only the entries appended since the last one; a
 * full walk from the first entry, at the first check and then every `fullEveryMs`, also finds an
 * older entry edited since. What it does not cover (the decisions topic, the replay of the
 * decider) stays with `gatewayctl policy-log verify`.
 */
export class ChainWatch {
  private reached = new Map<number, ChainPosition>();
  private lastFullAt: number | null = null;
  /** Once a check found a break, the chains are reported broken until the process restarts (and checks again from the start). */
  private broken = false;
  private readonly ok: Gauge;
  private readonly failures: Counter;
  private readonly entries: Counter;
  private readonly checkedAt: Gauge;

  constructor(private readonly pool: Pool, registry: Registry, private readonly logger: Logger, private readonly settings: ChainWatchSettings, private readonly clock: () => number = Date.now) {
    this.ok = new Gauge({ name: 'gateway_policy_chain_verify_ok', help: 'The policy log hash chains as the last checks found them: 1 intact, 0 a check found a break (kept until the process restarts)', registers: [registry] });
    this.failures = new Counter({ name: 'gateway_policy_chain_verify_failures_total', help: 'Policy log entries a chain check found broken (prev_hash, entry_hash, stored event or chain head)', registers: [registry] });
    this.entries = new Counter({ name: 'gateway_policy_chain_verified_entries_total', help: 'Policy log entries the chain checks have read', registers: [registry] });
    this.checkedAt = new Gauge({ name: 'gateway_policy_chain_verified_at_seconds', help: 'When the last chain check finished (Unix time)', registers: [registry] });
  }

  /** One check: the entries appended since the last one, or every entry when a full walk is due. */
  async check(): Promise<{ entries: number; divergences: number; full: boolean }> {
    const now = this.clock();
    const full = this.lastFullAt === null || now - this.lastFullAt >= this.settings.fullEveryMs;
    const findings = new Findings(20);
    const { reached, rows } = await readSnapshot(this.pool, (tx) => checkChains(tx, full ? new Map() : this.reached, findings));
    this.reached = reached;
    if (full) this.lastFullAt = now;
    this.entries.inc(rows);
    if (findings.count > 0) {
      this.broken = true;
      this.failures.inc(findings.count);
      // Log ids and check names only: the details quote hashes, and the operator's verify says the rest.
      this.logger.error({ divergences: findings.count, first: findings.kept.map(({ log_id, check }) => ({ log_id, check })) }, 'policy log chain check failed; run gatewayctl policy-log verify (docs/operations.md)');
    }
    this.ok.set(this.broken ? 0 : 1);
    this.checkedAt.set(this.clock() / 1000);
    return { entries: rows, divergences: findings.count, full };
  }
}
