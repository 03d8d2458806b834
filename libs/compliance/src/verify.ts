// policy-log verify: the log checked three ways, in one pass each, then compared.
//   (1) Postgres: each partition's chain (prev_hash, entry_hash recomputed), the stored event
//       against the row's columns, and the chain heads.
//   (2) The decisions topic: the same chain over the records, and one record per log id.
//   (3) The replay: customer-events re-run through the decider, every decision compared with
//       the one recorded.
// (3) is CPU work and runs on a worker thread (replay-thread.ts) while this thread reads (1) and
// (2) (decisions.ts), or on this thread when the deps name no connection (the API). Entries are
// kept as digests, so memory stays small. `gatewayctl policy-log verify` prints the VerifyReport;
// the dashboard's "verify my log" turns the same run into a customer's report (customer-report.ts).
import { readSnapshot, sql, z, type Queryable } from '@gw/db';
import type { SendDecided } from '@gw/events';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import { fromLogRow, PolicyLogRow } from '@gw/policy-log';
import { chainHeads, ChainWalk } from './chains.ts';
import { comparable, differingFields, digests, Findings, type Finding } from './copies.ts';
import { readDeadLetters, skippedPositions } from './dead-letters.ts';
import { readDecisions, type DecisionsOutcome, type DecisionsScope } from './decisions.ts';
import type { ComplianceDeps } from './deps.ts';
import { Count, cursor, POLICY_LOG_COLUMNS } from './entries.ts';
import { yielder, type ProgressCallback } from './progress.ts';
import { replayOnWorkerThread } from './replay-thread.ts';
import { replayCustomerEvents, replayFields, toScopeEnds, type ReplayOutcome, type ReplayScope } from './replay.ts';
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

/** (1) Every policy_log row of the partitions in scope, in chain order, from one snapshot. */
async function readPolicyLog(tx: Queryable, chains: number[] | null, customerId: string | null, findings: Findings, progress: (n: number) => void) {
  const rows = new Map<number, { compare: string; command_id: string; customer_id: string }>();
  const policyVersions = new Set<string>();
  let customerRows = 0;
  const heads = await chainHeads(tx);
  const walk = new ChainWalk(findings, heads);
  const breathe = yielder();
  const query = sql.fragment`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log ${chainFilter(chains)} ORDER BY partition_chain, log_id`;
  for await (const batch of cursor(tx, PolicyLogRow, query)) {
    for (const row of batch) {
      const turn = breathe();
      if (turn) await turn;
      const { entry, compare } = walk.next(row);
      rows.set(entry.log_id, { compare, command_id: entry.correlation_id, customer_id: entry.customer_id });
      if (customerId !== null && entry.customer_id === customerId) {
        customerRows++;
        policyVersions.add(entry.policy_version);
      }
    }
    progress(rows.size);
  }
  walk.end();
  if (chains === null) {
    for (const [partition, head] of heads) {
      if (!rows.has(head.last_log_id)) findings.report(head.last_log_id, 'db_chain_head', `policy_chain of partition ${partition} points at log_id ${head.last_log_id}, which is not in policy_log`, ['head_hash']);
    }
  }
  return { rows, chains: walk.chains, customerRows, policyVersions };
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
  const passes = await readSnapshot(pool, async (tx) => {
    // The snapshot begins with its first statement; every offset is read after it.
    const dbTotal = await tx.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log ${chainFilter(chains)}`);
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
    const decisionsScope: DecisionsScope = { topic: topics.name('policyDecisions'), ends: decisionEnds, chains, maxDivergences: options.maxDivergences ?? 10_000 };
    const onWorker = (options.replayWorker ?? true) && deps.connection !== undefined;
    const done = { replayed: 0, read: 0, rows: 0 };
    const total = dbTotal + [...decisionEnds.values(), ...customerEnds.values()].reduce((n, r) => n + Number(r.end - r.low), 0);
    const report = (pass: keyof typeof done) => (n: number) => {
      done[pass] = n;
      progress({ phase: 'verify', done: done.replayed + done.read + done.rows, total });
    };
    const [replay, decisions, db] = await Promise.all([
      onWorker ? replayOnWorkerThread({ connection: deps.connection!, scope }, report('replayed')) : replayCustomerEvents(kafka, deps.codec, scope, report('replayed')),
      readDecisions(kafka, deps.codec, decisionsScope, report('read')),
      readPolicyLog(tx, chains, customerId, findings, report('rows')),
    ]);
    findings.merge(decisions.divergences, decisions.divergenceCount);
    return { scope, replay, decisions, db, decisionEnds };
  });
  // After the snapshot: compare reads again, as they are now, the rows a record was ahead of (on
  // the pool, which slonik refuses inside the snapshot's transaction).
  const { replay, decisions, db } = passes;
  await compare({ deps, customerId, findings, ...passes });

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
  // The customer's entries by log id: a row of theirs, or a record of theirs (a record with no row is theirs too).
  const logIds = new Set<number>();
  if (customerId !== null) {
    for (const [logId, row] of db.rows) if (row.customer_id === customerId) logIds.add(logId);
    for (const [logId, record] of decisions.byLogId) if (record.customer_id === customerId) logIds.add(logId);
  }
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
    customer: { logIds, entries: db.customerRows, policyVersions: db.policyVersions },
  };
}

interface Passes {
  deps: ComplianceDeps;
  scope: ReplayScope;
  replay: ReplayOutcome;
  decisions: DecisionsOutcome;
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
      findings.report(c.logId, 'kafka_conflict', `record ${c.position} differs from the first record for this log_id (${c.first}) on ${fields.length > 0 ? fields.join(', ') : 'the message body'}`, fields);
    }
  }

  // Records against rows. A record past the snapshot (the consumer is running) is looked up again.
  const later: number[] = [];
  const differ: number[] = [];
  for (const [logId, record] of decisions.byLogId) {
    const row = db.rows.get(logId);
    if (!row) later.push(logId);
    else if (row.compare !== record.compare) differ.push(logId);
  }
  if (later.length > 0) {
    const found = await deps.pool.any(sql.type(PolicyLogRow)`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE log_id = ANY(${sql.array(later, 'int8')})`);
    const fresh = new Map(found.map((r) => [r.log_id, fromLogRow(r)]));
    for (const logId of later) {
      const entry = fresh.get(logId);
      const record = decisions.byLogId.get(logId)!;
      if (!entry) findings.report(logId, 'db_missing', `on the decisions topic (${record.position}) but not in policy_log`);
      else if (digests(entry).compare !== record.compare) differ.push(logId);
    }
  }
  if (differ.length > 0) await describeCopies(deps, decisions, decisionEnds, differ, findings);

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

/** What differs between the record and the row of each entry whose copies disagree: both read again (the rows as they are now). */
async function describeCopies(deps: ComplianceDeps, decisions: DecisionsOutcome, ends: Map<number, PartitionRange>, logIds: number[], findings: Findings) {
  const records = await recordsAt(deps.kafka, deps, ends, logIds.map((logId) => decisions.byLogId.get(logId)!.position));
  const rows = await deps.pool.any(sql.type(PolicyLogRow)`SELECT ${POLICY_LOG_COLUMNS} FROM policy_log WHERE log_id = ANY(${sql.array(logIds, 'int8')})`);
  const byLogId = new Map(rows.map((r) => [r.log_id, fromLogRow(r)]));
  for (const logId of logIds.sort((a, b) => a - b)) {
    const record = records.get(decisions.byLogId.get(logId)!.position);
    const row = byLogId.get(logId);
    const fields = record && row ? differingFields(comparable(record), comparable(row)) : [];
    findings.report(logId, 'kafka_vs_db', `the record on the decisions topic and the Postgres row differ${fields.length > 0 ? ` on ${fields.join(', ')}` : ''}`, fields);
  }
}

/** What differs, for the replays that do not match: those customers replayed again, keeping their entries, and the records read again. */
async function describeMismatches(deps: ComplianceDeps, scope: ReplayScope, decisions: DecisionsOutcome, ends: Map<number, PartitionRange>, mismatches: Array<{ commandId: string; customerId: string; logId: number }>, findings: Findings) {
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
    findings.report(logId, 'replay', `${summary}; differing fields: ${fields.join(', ')}`, fields);
  }
}
