// policy-log verify: the log checked three ways, streamed, each copy compared as it passes.
//   (1) Postgres: each partition's chain (prev_hash, entry_hash recomputed), the stored event
//       against the row's columns, and the chain heads.
//   (2) The decisions topic: the same chain over the records, each record against its row.
//   (3) The replay: customer-events re-run through the decider, each command decided with the
//       policy version its entry recorded and compared with that entry.
// (1) and (2) meet in one pass (decisions.ts); (3) is CPU work and runs on a worker thread
// (replay-thread.ts, replay-stream.ts), or on this thread when the deps name no connection (the
// API). Postgres is read in keyset pages per chain and both topics in order, so memory holds the
// customers' states, a page per chain and what diverges, whatever the size of the log.
// `gatewayctl policy-log verify` prints the VerifyReport; the dashboard's "verify my log" turns
// the same run into a customer's report (customer-report.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { readSnapshot, sql, z } from '@gw/db';
import type { SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { chainHeads } from './chains.ts';
import { comparable, differingFields, Findings, type Finding } from './copies.ts';
import { readDeadLetters, skippedPositions } from './dead-letters.ts';
import { checkCopies, rowDigests, type CopiesOutcome } from './decisions.ts';
import type { ComplianceDeps } from './deps.ts';
import { Count } from './entries.ts';
import type { ProgressCallback } from './progress.ts';
import { replayFields } from './replay.ts';
import { replayCustomerEvents, toScopeEnds, type ReplayOutcome, type ReplayScope } from './replay-stream.ts';
import { replayOnWorkerThread } from './replay-thread.ts';
import type { Divergence } from './copies.ts';

export type { CheckName, Divergence } from './copies.ts';

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

/** A run of verify: its report, and what a customer's report is made of besides. */
export interface VerifyRun {
  report: VerifyReport;
  /** The divergences kept, with the fields each is about. */
  findings: Finding[];
  /** With a customer: that customer's entries, as Postgres and the decisions topic know them (by log id). */
  customer: {
    logIds: Set<number>;
    /** The customer's rows in Postgres. */
    entries: number;
    /** The policy versions that decided the customer's entries (from the rows). */
    policyVersions: Set<string>;
  };
}

const PartitionChain = z.object({ p: z.number() });

/** The partition chains in scope: all (null), or those listed. */
const chainFilter = (chains: number[] | null) => (chains === null ? sql.fragment`` : sql.fragment`WHERE partition_chain = ANY(${sql.array(chains, 'int4')})`);

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
  return (await runVerify(deps, options)).report;
}

/** verifyPolicyLog, with what a customer's report needs besides the operator's report. */
export async function runVerify(deps: ComplianceDeps, options: VerifyOptions = {}): Promise<VerifyRun> {
  const started = Date.now();
  const { pool, kafka, topics } = deps;
  const customerId = options.customerId ?? null;
  const findings = new Findings(options.maxDivergences ?? 10_000);
  const progress = options.onProgress ?? (() => undefined);

  // With a customer, the chains holding that customer's entries are checked whole (each entry's
  // proof runs through its neighbours); the replay covers that customer only.
  const chains = customerId
    ? [...(await pool.anyFirst(sql.type(PartitionChain)`SELECT DISTINCT partition_chain AS p FROM policy_log WHERE customer_id = ${customerId} ORDER BY 1`))]
    : null;
  const inScope = (chain: number) => chains === null || chains.includes(chain);
  // The replay on this thread reads the entries on the pool, as they are now: it runs in the
  // context from outside the snapshot, as slonik refuses the pool inside a transaction's context.
  const outsideSnapshot = AsyncLocalStorage.snapshot();
  const passes = await readSnapshot(pool, async (tx) => {
    // The snapshot begins with its first statement; every offset is read after it.
    const dbTotal = await tx.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log ${chainFilter(chains)}`);
    const heads = await chainHeads(tx);
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
      heads: [...heads.values()].filter((h) => inScope(h.partition)).map((h) => [h.partition, h.last_log_id]),
    };
    const known = [...new Set([...heads.keys(), ...customerEnds.keys(), ...decisionEnds.keys()])];
    const onWorker = (options.replayWorker ?? true) && deps.connection !== undefined;
    const done = { replayed: 0, read: 0 };
    const total = dbTotal + [...decisionEnds.values(), ...customerEnds.values()].reduce((n, r) => n + Number(r.end - r.low), 0);
    const report = (pass: keyof typeof done) => (n: number) => {
      done[pass] = n;
      progress({ phase: 'verify', done: done.replayed + done.read, total });
    };
    // Both settle before the snapshot ends: a pass that fails must not leave the other's query
    // running on the transaction it closes.
    const [replay, copies] = await Promise.allSettled([
      onWorker ? replayOnWorkerThread({ connection: deps.connection!, scope }, report('replayed')) : outsideSnapshot(() => replayCustomerEvents(kafka, deps.codec, pool, scope, report('replayed'))),
      checkCopies(kafka, deps.codec, tx, { topic: topics.name('policyDecisions'), ends: decisionEnds, chains, known, heads, customerId }, findings, report('read')),
    ]);
    if (replay.status === 'rejected') throw replay.reason;
    if (copies.status === 'rejected') throw copies.reason;
    return { scope, replay: replay.value, copies: copies.value, decisionEnds };
  });
  // After the snapshot: what did not meet in order is looked up again, as it is now (on the pool,
  // which slonik refuses inside the snapshot's transaction).
  const { replay, copies } = passes;
  const duplicates = await compare({ deps, customerId, findings, ...passes });

  const counts: VerifyReport['counts'] = {
    db_rows: copies.counts.rows,
    db_chains: copies.chains,
    kafka_decisions: copies.counts.firsts + duplicates,
    kafka_duplicates: duplicates,
    customer_events: replay.customerEvents,
    decisions_replayed: replay.decided,
    duplicate_commands: replay.duplicateCommands,
    pending_commands: replay.pending.length,
    undecodable_customer_events: replay.undecodable,
    dead_lettered_customer_events: replay.deadLettered,
  };
  const elapsed = Date.now() - started;
  const events = copies.counts.rows + copies.counts.read + replay.read;
  // The customer's entries by log id: a row of theirs, or a record of theirs (a record with no row is theirs too).
  const logIds = copies.customerLogIds;
  if (customerId !== null) for (const record of copies.ahead) if (record.customerId === customerId) logIds.add(record.logId);
  return {
    report: {
      ok: findings.count === 0,
      customer_id: customerId,
      divergence_count: findings.count,
      // The operator's report keeps its shape: the fields are the customer's report's.
      divergences: findings.kept.map(({ log_id, check, detail }) => ({ log_id, check, detail })),
      counts,
      events,
      elapsed_ms: elapsed,
      events_per_second: Math.round(events / Math.max(elapsed / 1000, 0.001)),
    },
    findings: findings.kept,
    customer: { logIds, entries: copies.counts.customerRows, policyVersions: copies.policyVersions },
  };
}

interface Passes {
  deps: ComplianceDeps;
  scope: ReplayScope;
  replay: ReplayOutcome;
  copies: CopiesOutcome;
  customerId: string | null;
  decisionEnds: Map<number, PartitionRange>;
  findings: Findings;
}

/** What did not meet in order, settled; the replay's findings reported. Returns the identical repeated records. */
async function compare({ deps, scope, replay, copies, customerId, decisionEnds, findings }: Passes): Promise<number> {
  // Records behind their chain: another copy of a log id already met, identical or not.
  let duplicates = 0;
  const conflicts: Array<{ logId: number; position: string; row: SendDecided }> = [];
  const behindRows = await rowDigests(deps.pool, copies.behind.map((r) => r.logId));
  for (const record of copies.behind) {
    const row = behindRows.get(record.logId);
    if (!row) findings.report(record.logId, 'db_missing', `on the decisions topic (${record.position}) but not in policy_log`);
    else if (row.compare === record.compare) duplicates++;
    else conflicts.push({ logId: record.logId, position: record.position, row: row.entry });
  }
  if (conflicts.length > 0) {
    const read = await recordsAt(deps.kafka, deps, decisionEnds, conflicts.map((c) => c.position));
    for (const c of conflicts) {
      const later = read.get(c.position);
      const fields = later ? differingFields(comparable(c.row), comparable(later)) : [];
      findings.report(c.logId, 'kafka_conflict', `record ${c.position} repeats this log_id with other content than the entry's row and first record, on ${fields.length > 0 ? fields.join(', ') : 'the message body'}`, fields);
    }
  }

  // Records whose row differed, or was not in the snapshot (the consumer is running): looked up again.
  const differ: number[] = [];
  const aheadRows = await rowDigests(deps.pool, copies.ahead.map((r) => r.logId));
  for (const record of copies.ahead) {
    const row = aheadRows.get(record.logId);
    if (!row) findings.report(record.logId, 'db_missing', `on the decisions topic (${record.position}) but not in policy_log`);
    else if (row.compare !== record.compare) differ.push(record.logId);
  }
  if (differ.length > 0) await describeCopies(deps, copies, decisionEnds, differ, findings);

  // The replay against the recorded entries.
  const pending = new Set(replay.pending);
  for (const e of replay.errors) findings.report(e.logId, 'replay_error', `${e.eventType} ${e.position} of ${e.customerId}: ${e.error}`);
  for (const m of replay.missing) findings.report(null, 'replay_missing', `command ${m.commandId} (${m.position}, customer ${m.customerId}) was consumed but has no decision on the decisions topic`);
  for (const o of replay.orphans) findings.report(o.logId, 'replay_orphan', `decision for command ${o.commandId} has no matching command on customer-events that the replay decided`);
  if (replay.mismatches.length > 0) await describeMismatches(deps, scope, replay.mismatches, findings);

  // Rows no record met. A command's records are all on its customer's partition, so one past the
  // committed offset is in flight (pending), not missing.
  for (const [logId, row] of copies.looseRows) {
    if (pending.has(row.commandId) || (customerId !== null && row.customerId !== customerId)) continue;
    findings.report(logId, 'kafka_missing', `policy_log row for command ${row.commandId} has no record on the decisions topic`);
  }
  return duplicates;
}

/** What differs between the record and the row of each entry whose copies disagree: both read again (the rows as they are now). */
async function describeCopies(deps: ComplianceDeps, copies: CopiesOutcome, ends: Map<number, PartitionRange>, logIds: number[], findings: Findings) {
  const positions = new Map(copies.ahead.map((r) => [r.logId, r.position]));
  const records = await recordsAt(deps.kafka, deps, ends, logIds.map((logId) => positions.get(logId)!));
  const rows = await rowDigests(deps.pool, logIds);
  for (const logId of logIds.sort((a, b) => a - b)) {
    const record = records.get(positions.get(logId)!);
    const row = rows.get(logId)?.entry;
    const fields = record && row ? differingFields(comparable(record), comparable(row)) : [];
    findings.report(logId, 'kafka_vs_db', `the record on the decisions topic and the Postgres row differ${fields.length > 0 ? ` on ${fields.join(', ')}` : ''}`, fields);
  }
}

/** What differs, for the replays that do not match: those customers replayed again, keeping their entries, against the rows. */
async function describeMismatches(deps: ComplianceDeps, scope: ReplayScope, mismatches: Array<{ commandId: string; customerId: string; logId: number }>, findings: Findings) {
  const again = await replayCustomerEvents(deps.kafka, deps.codec, deps.pool, { ...scope, customers: [...new Set(mismatches.map((m) => m.customerId))], keep: mismatches.map((m) => m.commandId) });
  const replayed = new Map(again.kept.map((entry) => [entry.correlation_id, entry]));
  const rows = await rowDigests(deps.pool, mismatches.map((m) => m.logId));
  const rulesOf = (entry: SendDecided) => entry.reasons.map((r) => `${r.rule}:${r.outcome}`).join(',');
  for (const { commandId, logId } of mismatches) {
    const entry = rows.get(logId)?.entry;
    const expected = replayed.get(commandId);
    if (!entry || !expected) {
      findings.report(logId, 'replay', 'differs from the recorded decision (the entry could not be read again)');
      continue;
    }
    const fields = differingFields(replayFields(entry), replayFields(expected));
    const summary =
      entry.decision !== expected.decision || (entry.error_code ?? null) !== expected.error_code
        ? `recorded ${entry.decision}${entry.error_code ? `/${entry.error_code}` : ''}, replay ${expected.decision}${expected.error_code ? `/${expected.error_code}` : ''}`
        : rulesOf(entry) !== rulesOf(expected)
          ? `rule outcomes differ: recorded ${rulesOf(entry)}; replay ${rulesOf(expected)}`
          : 'same decision';
    findings.report(logId, 'replay', `${summary}; differing fields: ${fields.join(', ')}`, fields);
  }
}
