// policy-log verify: the log checked three ways, in one pass each, then compared.
//   (1) Postgres: each partition's chain (prev_hash, entry_hash recomputed), the stored event
//       against the row's columns, and the chain heads.
//   (2) The decisions topic: the same chain over the records, and one record per log id.
//   (3) The replay: customer-events re-run through the decider, every decision compared with
//       the one recorded.
// (3) is CPU work and runs on a worker thread (replay-thread.ts) while this thread reads (1) and
// (2), which mostly wait on their servers. Entries are kept as digests, so memory stays small.
import type { SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { canonicalJson, chainedFields, entryHash, fromLogRow, GENESIS_HASH, type PolicyLogRow } from '@gw/policy-log';
import { readDeadLetters, skippedPositions } from '../dlq/letters.ts';
import type { ComplianceDeps } from './context.ts';
import { cursor, readSnapshot } from './entries.ts';
import type { ProgressCallback } from './progress.ts';
import { digestOf, replayCustomerEvents, replayFields, toScopeEnds, type ReplayOutcome, type ReplayScope } from './replay.ts';
import { replayOnWorkerThread } from './replay-thread.ts';

export type CheckName =
  | 'db_chain' // prev_hash is not the previous row's entry_hash in its partition chain
  | 'db_hash' // entry_hash does not match the row's columns
  | 'db_event' // the stored decision_event disagrees with the row's columns
  | 'db_chain_head' // policy_chain does not point at the last row of the chain
  | 'kafka_conflict' // two records for one log_id with different content, or one command decided twice
  | 'kafka_chain' // chain break among the records on the decisions topic
  | 'kafka_hash' // a record's entry_hash does not match its content
  | 'kafka_vs_db' // the record on Kafka and the Postgres row differ
  | 'db_missing' // on Kafka, not in Postgres
  | 'kafka_missing' // in Postgres, not on Kafka (for a command the consumer has committed)
  | 'replay' // re-running the decider gives a different entry
  | 'replay_missing' // a processed command with no recorded decision
  | 'replay_orphan' // a recorded decision with no command on customer-events
  | 'replay_error' // the engine threw on the record
  | 'undecodable'; // a decisions record that cannot be decoded

export interface Divergence {
  log_id: number | null;
  check: CheckName;
  detail: string;
}

export interface VerifyOptions {
  customerId?: string;
  onProgress?: ProgressCallback;
  /** Divergences kept in the report (all are counted). */
  maxDivergences?: number;
  /** Replay on a worker thread (default, when the deps name their connections); false keeps it on this thread. */
  replayWorker?: boolean;
}

export interface VerifyReport {
  ok: boolean;
  customer_id: string | null;
  divergence_count: number;
  divergences: Divergence[];
  counts: {
    db_rows: number;
    db_chains: number;
    kafka_decisions: number;
    kafka_duplicates: number;
    customer_events: number;
    decisions_replayed: number;
    duplicate_commands: number;
    /** Commands past the policy consumer's committed offset: not decided yet, not checked. */
    pending_commands: number;
    undecodable_customer_events: number;
    /** Customer events the policy consumer dead-lettered (gatewayctl dlq): skipped by the replay as by the consumer. */
    dead_lettered_customer_events: number;
  };
  /** Every row and record read: Postgres rows + decision records + customer events. */
  events: number;
  elapsed_ms: number;
  events_per_second: number;
}

/** Everything of an entry that must agree between its copies (row and record): the chained fields, the hashes and the error text. */
const comparable = (entry: SendDecided) => ({ ...chainedFields(entry), error_message: entry.error_message ?? null, prev_hash: entry.prev_hash, entry_hash: entry.entry_hash });

function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
}

class Findings {
  readonly kept: Divergence[] = [];
  count = 0;
  constructor(private readonly max: number) {}
  report(log_id: number | null, check: CheckName, detail: string): void {
    this.count++;
    if (this.kept.length < this.max) this.kept.push({ log_id, check, detail });
  }
}

/** A record of the decisions topic, as digests. */
interface Recorded {
  compare: string;
  replay: string;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
  command_id: string;
  customer_id: string;
  position: string;
}

/** (2) Every SendDecided on the decisions topic up to `ends`: hashes checked, the first record per log id kept. */
async function readDecisions(deps: ComplianceDeps, ends: Map<number, PartitionRange>, inScope: (chain: number) => boolean, findings: Findings, progress: (n: number) => void) {
  const byLogId = new Map<number, Recorded>();
  const byCommand = new Map<string, number>();
  // A second record for a log id with other content: described once the pass is over (both read again).
  const conflicts: Array<{ logId: number; first: string; position: string }> = [];
  let read = 0;
  let duplicates = 0;
  await deps.kafka.readToEnd(deps.topics.name('policyDecisions'), {
    ends,
    onBatch: async (records) => {
      for (const record of records) {
        read++;
        const position = `${record.partition}@${record.offset}`;
        let entry: SendDecided;
        try {
          const event = await deps.codec.decode(record);
          if (event?.type !== 'SendDecided') continue;
          entry = event.payload;
        } catch (error) {
          findings.report(null, 'undecodable', `decisions record ${position}: ${(error as Error).message}`);
          continue;
        }
        if (!inScope(entry.partition_chain)) continue;
        const compare = digestOf(comparable(entry));
        const first = byLogId.get(entry.log_id);
        if (first) {
          if (first.compare === compare) duplicates++;
          else conflicts.push({ logId: entry.log_id, first: first.position, position });
          continue;
        }
        if (entryHash(entry.prev_hash, entry) !== entry.entry_hash) findings.report(entry.log_id, 'kafka_hash', `record ${position}: entry_hash does not match its content`);
        const twice = byCommand.get(entry.correlation_id);
        if (twice !== undefined) findings.report(entry.log_id, 'kafka_conflict', `command ${entry.correlation_id} was decided twice: log_id ${twice} and ${entry.log_id}`);
        else byCommand.set(entry.correlation_id, entry.log_id);
        byLogId.set(entry.log_id, {
          compare,
          replay: digestOf(replayFields(entry)),
          partition_chain: entry.partition_chain,
          prev_hash: entry.prev_hash,
          entry_hash: entry.entry_hash,
          command_id: entry.correlation_id,
          customer_id: entry.customer_id,
          position,
        });
      }
      progress(read);
    },
  });
  // Each partition's records, in log order, must chain.
  const chains = new Map<number, Array<[number, Recorded]>>();
  for (const item of byLogId) chains.set(item[1].partition_chain, [...(chains.get(item[1].partition_chain) ?? []), item]);
  for (const [partition, list] of chains) {
    let prev = GENESIS_HASH;
    for (const [logId, entry] of list.sort((a, b) => a[0] - b[0])) {
      if (entry.prev_hash !== prev) findings.report(logId, 'kafka_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous record's hash ${prev.slice(0, 12)}… in partition ${partition}`);
      prev = entry.entry_hash;
    }
  }
  return { byLogId, read, duplicates, conflicts };
}

/** (1) Every policy_log row of the partitions in scope, in chain order, from one snapshot. */
async function readPolicyLog(client: Parameters<Parameters<typeof readSnapshot>[1]>[0], chains: number[] | null, findings: Findings, progress: (n: number) => void) {
  const rows = new Map<number, { compare: string; command_id: string; customer_id: string }>();
  const heads = new Map((await client.query<{ partition: number; head_hash: string; last_log_id: number }>('SELECT partition, head_hash, last_log_id FROM policy_chain')).rows.map((r) => [r.partition, r]));
  let chain: number | null = null;
  let prev = GENESIS_HASH;
  let last = -1;
  let chainCount = 0;
  const closeChain = () => {
    if (chain === null) return;
    chainCount++;
    const head = heads.get(chain);
    if (!head) findings.report(last, 'db_chain_head', `policy_chain has no head for partition ${chain}`);
    else if (head.head_hash !== prev || Number(head.last_log_id) !== last) {
      findings.report(last, 'db_chain_head', `policy_chain of partition ${chain} points at log_id ${head.last_log_id} (${head.head_hash.slice(0, 12)}…), the chain ends at ${last} (${prev.slice(0, 12)}…)`);
    }
  };
  const filter = chains === null ? '' : 'WHERE partition_chain = ANY($1::int[])';
  for await (const batch of cursor<PolicyLogRow>(client, `SELECT * FROM policy_log ${filter} ORDER BY partition_chain, log_id`, chains === null ? [] : [chains], 2000)) {
    for (const row of batch) {
      if (row.partition_chain !== chain) {
        closeChain();
        chain = row.partition_chain;
        prev = GENESIS_HASH;
      }
      const entry = fromLogRow(row);
      if (entry.prev_hash !== prev) findings.report(entry.log_id, 'db_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous entry's hash ${prev.slice(0, 12)}… in partition ${entry.partition_chain}`);
      const recomputed = entryHash(entry.prev_hash, entry);
      if (recomputed !== entry.entry_hash) findings.report(entry.log_id, 'db_hash', `entry_hash ${entry.entry_hash.slice(0, 12)}… does not match the row's columns (recomputed ${recomputed.slice(0, 12)}…)`);
      const fields = differingFields(comparable(entry), comparable(row.decision_event));
      if (fields.length > 0) findings.report(entry.log_id, 'db_event', `decision_event disagrees with the columns on ${fields.join(', ')}`);
      prev = entry.entry_hash;
      last = entry.log_id;
      rows.set(entry.log_id, { compare: digestOf(comparable(entry)), command_id: entry.correlation_id, customer_id: entry.customer_id });
    }
    progress(rows.size);
  }
  closeChain();
  if (chains === null) {
    for (const [partition, head] of heads) {
      if (!rows.has(Number(head.last_log_id))) findings.report(Number(head.last_log_id), 'db_chain_head', `policy_chain of partition ${partition} points at log_id ${head.last_log_id}, which is not in policy_log`);
    }
  }
  return { rows, chains: chainCount };
}

/** SendDecided records at the given positions (partition@offset), to describe what differs. */
async function recordsAt(kafka: KafkaInspector, deps: ComplianceDeps, ends: Map<number, PartitionRange>, positions: string[]): Promise<Map<string, SendDecided>> {
  const found = new Map<string, SendDecided>();
  const wanted = new Set(positions);
  await kafka.readToEnd(deps.topics.name('policyDecisions'), {
    ends,
    onBatch: async (records) => {
      for (const record of records) {
        const position = `${record.partition}@${record.offset}`;
        if (!wanted.has(position)) continue;
        const event = await deps.codec.decode(record).catch(() => null);
        if (event?.type === 'SendDecided') found.set(position, event.payload);
      }
    },
  });
  return found;
}

/**
 * Verifies the policy log (see the file comment). Safe to run while the gateway runs: the
 * Postgres snapshot is taken before the Kafka offsets are read, and commands the policy consumer
 * has not committed yet count as pending, not as divergences.
 */
export async function verifyPolicyLog(deps: ComplianceDeps, options: VerifyOptions = {}): Promise<VerifyReport> {
  const started = Date.now();
  const { pool, kafka, topics } = deps;
  const customerId = options.customerId ?? null;
  const findings = new Findings(options.maxDivergences ?? 10_000);
  const progress = options.onProgress ?? (() => undefined);

  // With --customer, the chains holding that customer's entries are checked whole (each entry's
  // proof runs through its neighbours); the replay covers that customer only.
  const chains = customerId
    ? (await pool.query<{ p: number }>('SELECT DISTINCT partition_chain AS p FROM policy_log WHERE customer_id = $1 ORDER BY 1', [customerId])).rows.map((r) => r.p)
    : null;
  const inScope = (chain: number) => chains === null || chains.includes(chain);

  return readSnapshot(pool, async (client) => {
    // The snapshot begins with its first statement; every offset is read after it.
    const dbTotal = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM policy_log ${chains ? 'WHERE partition_chain = ANY($1::int[])' : ''}`, chains ? [chains] : [])).rows[0]?.n ?? 0);
    const customerTopic = topics.name('customerEvents');
    const committed = await kafka.committedOffsets(topics.group('policy'), customerTopic);
    const decisionEnds = await kafka.endOffsets(topics.name('policyDecisions'));
    const customerEnds = await kafka.endOffsets(customerTopic);
    const scope: ReplayScope = {
      topic: customerTopic,
      ends: toScopeEnds(customerEnds),
      committed: [...committed].map(([partition, offset]) => [partition, offset === null ? null : String(offset)]),
      customers: customerId ? [customerId] : null,
      skip: [...skippedPositions(await readDeadLetters(kafka, deps.codec, topics), 'policy', customerTopic)],
    };
    const useWorker = (options.replayWorker ?? true) && deps.connection !== undefined;
    let replayed = 0;
    let read = 0;
    const report = () => progress({ phase: 'verify', done: read + replayed, total: dbTotal + [...decisionEnds.values(), ...customerEnds.values()].reduce((n, r) => n + Number(r.end - r.low), 0) });
    const [replay, decisions, db] = await Promise.all([
      useWorker ? replayOnWorkerThread(deps.connection!, scope) : replayCustomerEvents(kafka, deps.codec, scope, (n) => ((replayed = n), report())),
      readDecisions(deps, decisionEnds, inScope, findings, (n) => ((read = n), report())),
      readPolicyLog(client, chains, findings, () => report()),
    ]);
    await compare({ deps, scope, replay, decisions, db, customerId, decisionEnds, findings });

    const counts: VerifyReport['counts'] = {
      db_rows: db.rows.size,
      db_chains: db.chains,
      kafka_decisions: decisions.byLogId.size + decisions.duplicates,
      kafka_duplicates: decisions.duplicates,
      customer_events: replay.customerEvents,
      decisions_replayed: replay.decided.length,
      duplicate_commands: replay.duplicateCommands,
      pending_commands: replay.pending.length,
      undecodable_customer_events: replay.undecodable,
      dead_lettered_customer_events: replay.deadLettered,
    };
    const elapsed = Date.now() - started;
    const events = db.rows.size + decisions.read + replay.read;
    return {
      ok: findings.count === 0,
      customer_id: customerId,
      divergence_count: findings.count,
      divergences: findings.kept,
      counts,
      events,
      elapsed_ms: elapsed,
      events_per_second: Math.round(events / Math.max(elapsed / 1000, 0.001)),
    };
  });
}

interface Passes {
  deps: ComplianceDeps;
  scope: ReplayScope;
  replay: ReplayOutcome;
  decisions: Awaited<ReturnType<typeof readDecisions>>;
  db: Awaited<ReturnType<typeof readPolicyLog>>;
  customerId: string | null;
  decisionEnds: Map<number, PartitionRange>;
  findings: Findings;
}

/** The three passes against each other. */
async function compare({ deps, scope, replay, decisions, db, customerId, decisionEnds, findings }: Passes): Promise<void> {
  if (decisions.conflicts.length > 0) {
    const read = await recordsAt(deps.kafka, deps, decisionEnds, decisions.conflicts.flatMap((c) => [c.first, c.position]));
    for (const c of decisions.conflicts) {
      const first = read.get(c.first);
      const later = read.get(c.position);
      const fields = first && later ? differingFields(comparable(first), comparable(later)) : [];
      findings.report(c.logId, 'kafka_conflict', `record ${c.position} differs from the first record for this log_id (${c.first}) on ${fields.length > 0 ? fields.join(', ') : 'the message body'}`);
    }
  }

  // Records against rows. A record past the snapshot (the consumer is running) is looked up again.
  const later: number[] = [];
  for (const [logId, record] of decisions.byLogId) {
    const row = db.rows.get(logId);
    if (!row) later.push(logId);
    else if (row.compare !== record.compare) findings.report(logId, 'kafka_vs_db', 'the record on the decisions topic and the Postgres row differ');
  }
  if (later.length > 0) {
    const fresh = new Map((await deps.pool.query<PolicyLogRow>('SELECT * FROM policy_log WHERE log_id = ANY($1::bigint[])', [later])).rows.map((r) => [Number(r.log_id), fromLogRow(r)]));
    for (const logId of later) {
      const entry = fresh.get(logId);
      const record = decisions.byLogId.get(logId)!;
      if (!entry) findings.report(logId, 'db_missing', `on the decisions topic (${record.position}) but not in policy_log`);
      else if (digestOf(comparable(entry)) !== record.compare) findings.report(logId, 'kafka_vs_db', 'the record on the decisions topic and the Postgres row differ');
    }
  }

  // Replayed decisions against recorded ones.
  const recorded = new Map<string, { logId: number; replay: string; seen: boolean }>();
  for (const [logId, record] of decisions.byLogId) {
    if (!customerId || record.customer_id === customerId) recorded.set(record.command_id, { logId, replay: record.replay, seen: false });
  }
  const pending = new Set(replay.pending);
  for (const e of replay.errors) findings.report(recorded.get(e.correlationId)?.logId ?? null, 'replay_error', `${e.eventType} ${e.position} of ${e.customerId}: ${e.error}`);
  const mismatches: Array<{ commandId: string; customerId: string; logId: number }> = [];
  for (const [commandId, digest, partition, offset, decidedFor] of replay.decided) {
    const found = recorded.get(commandId);
    if (!found) {
      findings.report(null, 'replay_missing', `command ${commandId} (${partition}@${offset}, customer ${decidedFor}) was consumed but has no decision on the decisions topic`);
      continue;
    }
    found.seen = true;
    if (found.replay !== digest) mismatches.push({ commandId, customerId: decidedFor, logId: found.logId });
  }
  if (mismatches.length > 0) await describeMismatches(deps, scope, decisions, decisionEnds, mismatches, findings);
  for (const [commandId, found] of recorded) {
    // A command past the committed offset may have been decided already; only a decision with no
    // command at all, or one for a command the replay reached, is a divergence.
    if (!found.seen && !pending.has(commandId)) findings.report(found.logId, 'replay_orphan', `decision for command ${commandId} has no matching command on customer-events that the replay decided`);
  }

  // Rows with no record. A command's records are all on its customer's partition, so one past the
  // committed offset is in flight (pending), not missing.
  const reached = new Set([...replay.decided.map((d) => d[0]), ...replay.errors.map((e) => e.correlationId)]);
  for (const [logId, row] of db.rows) {
    if (decisions.byLogId.has(logId) || pending.has(row.command_id)) continue;
    if (!reached.has(row.command_id) && customerId && row.customer_id !== customerId) continue;
    findings.report(logId, 'kafka_missing', `policy_log row for command ${row.command_id} has no record on the decisions topic`);
  }
}

/** What differs, for the replays that do not match: those customers replayed again, keeping their entries, and the records read again. */
async function describeMismatches(deps: ComplianceDeps, scope: ReplayScope, decisions: Awaited<ReturnType<typeof readDecisions>>, ends: Map<number, PartitionRange>, mismatches: Array<{ commandId: string; customerId: string; logId: number }>, findings: Findings) {
  const again = await replayCustomerEvents(deps.kafka, deps.codec, { ...scope, customers: [...new Set(mismatches.map((m) => m.customerId))], keep: mismatches.map((m) => m.commandId) });
  const replayed = new Map(again.kept.map((entry) => [entry.correlation_id, entry]));
  const records = await recordsAt(deps.kafka, deps, ends, mismatches.map((m) => decisions.byLogId.get(m.logId)!.position));
  const rulesOf = (entry: SendDecided) => entry.reasons.map((r) => `${r.rule}:${r.outcome}`).join(',');
  for (const { commandId, logId } of mismatches) {
    const entry = records.get(decisions.byLogId.get(logId)!.position);
    const expected = replayed.get(commandId);
    if (!entry || !expected) {
      findings.report(logId, 'replay', 'differs from the recorded decision (the record could not be read again)');
      continue;
    }
    const fields = differingFields(replayFields(entry), replayFields(expected));
    const summary =
      entry.decision !== expected.decision || (entry.error_code ?? null) !== expected.error_code
        ? `recorded ${entry.decision}${entry.error_code ? `/${entry.error_code}` : ''}, replay ${expected.decision}${expected.error_code ? `/${expected.error_code}` : ''}`
        : rulesOf(entry) !== rulesOf(expected)
          ? `rule outcomes differ: recorded ${rulesOf(entry)}; replay ${rulesOf(expected)}`
          : 'same decision';
    findings.report(logId, 'replay', `${summary}; differing fields: ${fields.join(', ')}`);
  }
}

export function formatVerifyReport(report: VerifyReport): string {
  const c = report.counts;
  const lines = [
    `Policy log verification${report.customer_id ? ` (customer ${report.customer_id})` : ''}: ${report.ok ? 'CLEAN' : `${report.divergence_count} DIVERGENCE(S)`}`,
    `  postgres   ${c.db_rows} rows in ${c.db_chains} partition chains`,
    `  kafka      ${c.kafka_decisions} decision records (${c.kafka_duplicates} identical duplicates)`,
    `  replay     ${c.customer_events} customer events, ${c.decisions_replayed} decisions re-run, ${c.duplicate_commands} repeated commands, ${c.pending_commands} pending, ${c.dead_lettered_customer_events} dead-lettered`,
    `  ${report.events} events in ${(report.elapsed_ms / 1000).toFixed(2)} s (${report.events_per_second} events/s)`,
  ];
  if (report.divergences.length > 0) {
    lines.push('Divergences:');
    for (const d of report.divergences) lines.push(`  log_id ${d.log_id ?? '-'}  ${d.check.padEnd(14)} ${d.detail}`);
    if (report.divergence_count > report.divergences.length) lines.push(`  … and ${report.divergence_count - report.divergences.length} more`);
  }
  return `${lines.join('\n')}\n`;
}
