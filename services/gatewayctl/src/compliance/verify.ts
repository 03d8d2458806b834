import type { SendDecided } from '@gw/events';
import { canonicalJson, GENESIS_HASH } from '@gw/policy-log';
import type { ComplianceDeps } from './context.ts';
import { comparable, cursor, differingFields, entryFromColumns, readSnapshot, ROW_COLUMNS, VERIFY_COLUMNS, type PolicyLogRow } from './entries.ts';
import { chainedJson, compareDigest, hashOf } from './fingerprint.ts';
import type { KafkaInspector, PartitionRange } from '@gw/kafka';
import type { EventCodec } from '@gw/events';
import type { ProgressCallback } from './progress.ts';
import { replayFields } from './replay.ts';
import { prepareReplay, replayCustomerEvents, toScopeRanges, type ReplayOutcome, type ReplayScope } from './replay-pass.ts';
import type { DecisionDigestBatch } from './decision-digests.ts';
import { readDeadLetters, skippedPositions } from '../dlq/letters.ts';

export type CheckName =
  | 'db_chain' // prev_hash is not the previous row's entry_hash in its partition chain
  | 'db_hash' // entry_hash does not match the row's columns
  | 'db_event' // the stored decision_event disagrees with the row's columns
  | 'db_chain_head' // policy_chain does not point at the last row of the chain
  | 'kafka_conflict' // two records for one log_id with different content
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
  /** Replay in worker threads (default); false keeps it on this thread. */
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
  /**
   * Wall time of each check. (3) the replay runs first, alone (this thread reads customer-events
   * and worker threads decode and decide, the partitions shared between them), then (1) the
   * Postgres chain and (2) the decisions topic side by side; replay_start: waiting for the worker
   * threads to finish loading (they start with verify) before the replay could begin; other:
   * snapshots, offsets, lookups and comparisons around them.
   */
  phases_ms?: { postgres: number; decisions: number; replay: number; replay_start: number; other: number };
}

interface KafkaEntry {
  /** Digest of the whole record (recordDigest). */
  digest: string;
  /** Digest of its comparable fields (compareDigest). */
  compare: string;
  partition_chain: number;
  prev_hash: string;
  entry_hash: string;
  correlation_id: string;
  customer_id: string;
  offset: string;
  partition: number;
}

interface Recorded {
  log_id: number;
  /** Digest of its replayFields (replayDigestOf). */
  replay: string;
  seen: boolean;
}

/**
 * Reads the SendDecided records at the given positions of the decisions topic (each partition
 * from its start up to the furthest position wanted). Used only to describe divergences: the main
 * pass keeps digests of the records, not their content.
 */
async function decisionsAt(kafka: KafkaInspector, codec: EventCodec, topic: string, ranges: Map<number, PartitionRange>, positions: Array<{ partition: number; offset: string }>): Promise<Map<string, SendDecided>> {
  const found = new Map<string, SendDecided>();
  if (positions.length === 0) return found;
  const wanted = new Set(positions.map((p) => `${p.partition}@${p.offset}`));
  const ends = new Map<number, PartitionRange>();
  for (const { partition, offset } of positions) {
    const range = ranges.get(partition);
    const end = BigInt(offset) + 1n;
    if (range && end > (ends.get(partition)?.end ?? 0n)) ends.set(partition, { ...range, end });
  }
  await kafka.readToEnd(topic, {
    ends,
    concurrency: ends.size,
    onBatch: async (records) => {
      for (const record of records) {
        const key = `${record.partition}@${record.offset}`;
        if (!wanted.has(key)) continue;
        const event = await codec.decode(record).catch(() => null);
        if (event?.type === 'SendDecided') found.set(key, event.payload);
      }
    },
  });
  return found;
}

function diffKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
}

const compareDigestOf = (entry: SendDecided) => compareDigest(entry, hashOf(entry.prev_hash, chainedJson(entry)));
const rulesOf = (entry: SendDecided) => entry.reasons.map((r) => `${r.rule}:${r.outcome}`).join(',');
const total = (ends: Map<number, PartitionRange>) => [...ends.values()].reduce((n, r) => n + Number(r.end - r.low), 0);

/**
 * Verifies the policy log three ways: the hash chain and content of the Postgres projection, the
 * same over the decisions topic (and that both copies agree), and a re-run of the decider over the
 * customer streams compared with what was recorded. Safe to run while the gateway runs: commands
 * the policy consumer has not committed yet are counted as pending, not as divergences.
 */
export async function verifyPolicyLog(deps: ComplianceDeps, options: VerifyOptions = {}): Promise<VerifyReport> {
  const started = Date.now();
  const { pool, kafka, codec, topics } = deps;
  const customerId = options.customerId;
  const max = options.maxDivergences ?? 10_000;
  const divergences: Divergence[] = [];
  let divergenceCount = 0;
  const report = (log_id: number | null, check: CheckName, detail: string) => {
    divergenceCount++;
    if (divergences.length < max) divergences.push({ log_id, check, detail });
  };
  const counts: VerifyReport['counts'] = {
    db_rows: 0, db_chains: 0, kafka_decisions: 0, kafka_duplicates: 0, customer_events: 0,
    decisions_replayed: 0, duplicate_commands: 0, pending_commands: 0, undecodable_customer_events: 0, dead_lettered_customer_events: 0,
  };
  const progress = options.onProgress ?? (() => undefined);

  // With --customer, the chains of the partitions holding that customer's entries are checked
  // whole (each entry's proof runs through its neighbours); the replay covers that customer only.
  let chains: number[] | null = null;
  if (customerId) {
    const found = await pool.query<{ p: number }>('SELECT DISTINCT partition_chain AS p FROM policy_log WHERE customer_id = $1 ORDER BY 1', [customerId]);
    chains = found.rows.map((r) => r.p);
  }
  const inScope = (partitionChain: number) => chains === null || chains.includes(partitionChain);

  // (3) The replay's workers start loading now; they are told what to replay once the offsets are read.
  const replayRunner = prepareReplay(deps, options.replayWorker ?? true);

  // (1) Postgres, in one snapshot taken now and read once the replay is done, while (2) reads the
  // decisions topic: the two passes are independent until their results are compared, and each
  // waits on its own server. The replay runs alone before them: it is the CPU-bound check, and
  // beside them it would share the cores with their decoding and hashing. (2) is decoded and
  // digested on one of the replay's worker threads once the replay is over, so (1) has this
  // thread to itself.
  const phases = { postgres: 0, decisions: 0, replay: 0, replay_start: 0, other: 0 };
  let postgresStarted = 0;
  let releasePostgres!: (go: boolean) => void;
  const postgresGate = new Promise<boolean>((resolve) => (releasePostgres = resolve));
  let snapshotTaken!: () => void;
  const snapshotReady = new Promise<void>((resolve) => (snapshotTaken = resolve));
  const dbRows = new Map<number, { compare: string; command_id: string; customer_id: string }>();
  // One progress line for the three passes that run together (a terminal bar redraws per phase).
  let dbTotal = 0;
  let decisionsTotal = 0;
  let decisionsRead = 0;
  let replayTotal = 0;
  let replayRead = 0;
  const replayProgress = () => progress({ phase: 'replay', done: replayRead, total: replayTotal });
  const bothProgress = () => progress({ phase: 'postgres + kafka', done: counts.db_rows + decisionsRead, total: dbTotal + decisionsTotal });
  const postgresPass = readSnapshot(pool, async (client) => {
    const filter = chains === null ? '' : 'WHERE partition_chain = ANY($1::int[])';
    const params = chains === null ? [] : [chains];
    dbTotal = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM policy_log ${filter}`, params)).rows[0]?.n ?? 0);
    // The snapshot exists from the first statement on: Kafka offsets may be read from here.
    snapshotTaken();
    if (!(await postgresGate)) throw new Error('verify stopped before the Postgres pass (the replay failed)');
    postgresStarted = Date.now();
    const heads = new Map((await client.query<{ partition: number; head_hash: string; last_log_id: number }>('SELECT partition, head_hash, last_log_id FROM policy_chain')).rows.map((r) => [r.partition, r]));
    let chain: number | null = null;
    let prev = GENESIS_HASH;
    let lastLogId = -1;
    const closeChain = () => {
      if (chain === null) return;
      counts.db_chains++;
      const head = heads.get(chain);
      if (!head) report(lastLogId, 'db_chain_head', `policy_chain has no head for partition ${chain}`);
      else if (head.head_hash !== prev || head.last_log_id !== lastLogId) {
        report(lastLogId, 'db_chain_head', `policy_chain of partition ${chain} points at log_id ${head.last_log_id} (${head.head_hash.slice(0, 12)}…), the chain ends at ${lastLogId} (${prev.slice(0, 12)}…)`);
      }
    };
    // decision_event comes back only where Postgres found it differs from the columns (VERIFY_COLUMNS).
    for await (const batch of cursor<Omit<PolicyLogRow, 'decision_event'> & { decision_event: SendDecided | null }>(client, `SELECT ${VERIFY_COLUMNS} FROM policy_log ${filter} ORDER BY partition_chain, log_id`, params, 2000, true)) {
      for (const row of batch) {
        if (row.partition_chain !== chain) {
          closeChain();
          chain = row.partition_chain;
          prev = GENESIS_HASH;
        }
        const entry = entryFromColumns(row as PolicyLogRow);
        if (row.prev_hash !== prev) report(row.log_id, 'db_chain', `prev_hash ${row.prev_hash.slice(0, 12)}… is not the previous entry's hash ${prev.slice(0, 12)}… in partition ${row.partition_chain}`);
        const chained = chainedJson(entry);
        const recomputed = hashOf(row.prev_hash, chained);
        if (recomputed !== row.entry_hash) report(row.log_id, 'db_hash', `entry_hash ${row.entry_hash.slice(0, 12)}… does not match the row's columns (recomputed ${recomputed.slice(0, 12)}…)`);
        if (row.decision_event !== null) {
          const fields = differingFields(entry, row.decision_event);
          if (fields.length > 0) report(row.log_id, 'db_event', `decision_event disagrees with the columns on ${fields.join(', ')}`);
        }
        prev = row.entry_hash;
        lastLogId = row.log_id;
        dbRows.set(row.log_id, { compare: compareDigest(entry, recomputed), command_id: row.command_id, customer_id: row.customer_id });
        counts.db_rows++;
      }
      bothProgress();
    }
    closeChain();
    if (chains === null) {
      for (const [partition, head] of heads) {
        if (!dbRows.has(head.last_log_id)) report(head.last_log_id, 'db_chain_head', `policy_chain of partition ${partition} points at log_id ${head.last_log_id}, which is not in policy_log`);
      }
    }
  }).finally(() => {
    phases.postgres = postgresStarted ? Date.now() - postgresStarted : 0;
  });
  postgresPass.catch(() => undefined); // awaited below; a failure surfaces there
  const abandon = async () => {
    releasePostgres(false);
    await Promise.allSettled([postgresPass, replayRunner.stop()]);
  };
  try {
    await Promise.race([snapshotReady, postgresPass]);
  } catch (error) {
    await abandon();
    throw error;
  }

  // The order of these snapshots makes the checks safe against a running consumer: every decision
  // of a command below the committed offset is on the topic below decisionEnds, and every command
  // with a row or a record is below customerEnds.
  const customerTopic = topics.name('customerEvents');
  let decisionEnds: Map<number, PartitionRange>;
  let outcome: ReplayOutcome;
  let replayScope: ReplayScope;
  try {
    const committed = await kafka.committedOffsets(topics.group('policy'), customerTopic);
    decisionEnds = await kafka.endOffsets(topics.name('policyDecisions'));
    const customerEnds = await kafka.endOffsets(customerTopic);

    // (3) The re-run of the decider: it needs only the offsets above, and its results are
    // compared with those of (1) and (2) once they are done.
    const replayStarted = Date.now();
    replayTotal = total(customerEnds);
    const deadLettered = skippedPositions(await readDeadLetters(kafka, deps.codec, topics), 'policy', customerTopic);
    replayScope = {
      topic: customerTopic,
      ends: toScopeRanges(customerEnds),
      committed: [...committed].map(([partition, offset]) => [partition, offset === null ? null : String(offset)]),
      customers: customerId ? [customerId] : null,
      skip: [...deadLettered],
    };
    outcome = await replayRunner.run(replayScope, (done) => ((replayRead = done), replayProgress()));
    phases.replay_start = outcome.startMs ?? 0;
    phases.replay = Date.now() - replayStarted - phases.replay_start;
  } catch (error) {
    await abandon();
    throw error;
  }
  releasePostgres(true);

  // (2) The decisions topic.
  const kafkaEntries = new Map<number, KafkaEntry>();
  const recorded = new Map<string, Recorded>();
  decisionsTotal = total(decisionEnds);
  const decisionsStarted = Date.now();
  // Conflicting records are described once the pass is over (from a second read of both records).
  const conflicts: Array<{ log_id: number; partition: number; offset: string; first: KafkaEntry }> = [];
  const slotsLeft = () => max - divergences.length - conflicts.length;
  // The records are decoded and digested where they are read (a worker thread of the replay's,
  // or this thread without one); here each record's digests are checked and kept.
  const acceptDecisions = (batch: DecisionDigestBatch) => {
    decisionsRead += batch.read;
    for (const u of batch.undecodable) report(null, 'undecodable', `decisions record ${u.partition}@${u.offset}: ${u.error}`);
    for (const d of batch.digests) {
      if (!inScope(d.partition_chain)) continue;
      counts.kafka_decisions++;
      const first = kafkaEntries.get(d.log_id);
      if (first) {
        if (first.digest === d.digest) counts.kafka_duplicates++;
        else if (slotsLeft() > 0) conflicts.push({ log_id: d.log_id, partition: d.partition, offset: d.offset, first });
        else report(d.log_id, 'kafka_conflict', `record ${d.partition}@${d.offset} differs from the first record for this log_id (${first.partition}@${first.offset})`);
        continue;
      }
      if (!d.hash_ok) report(d.log_id, 'kafka_hash', `record ${d.partition}@${d.offset}: entry_hash does not match its content`);
      kafkaEntries.set(d.log_id, {
        digest: d.digest,
        compare: d.compare,
        partition_chain: d.partition_chain,
        prev_hash: d.prev_hash,
        entry_hash: d.entry_hash,
        correlation_id: d.correlation_id,
        customer_id: d.customer_id,
        offset: d.offset,
        partition: d.partition,
      });
      if (!customerId || d.customer_id === customerId) {
        const already = recorded.get(d.correlation_id);
        if (already) report(d.log_id, 'kafka_conflict', `command ${d.correlation_id} was decided twice: log_id ${already.log_id} and ${d.log_id}`);
        else recorded.set(d.correlation_id, { log_id: d.log_id, replay: d.replay, seen: false });
      }
    }
    bothProgress();
  };
  const decisionsPass = replayRunner.digestDecisions(topics.name('policyDecisions'), decisionEnds, acceptDecisions).finally(() => {
    phases.decisions = Date.now() - decisionsStarted;
  });
  // Both passes settle before anything is reported or thrown.
  const [pgDone, kafkaDone] = await Promise.allSettled([postgresPass, decisionsPass]);
  await replayRunner.stop();
  if (pgDone.status === 'rejected' || kafkaDone.status === 'rejected') {
    throw pgDone.status === 'rejected' ? pgDone.reason : (kafkaDone as PromiseRejectedResult).reason;
  }
  if (conflicts.length > 0) {
    const read = await decisionsAt(kafka, codec, topics.name('policyDecisions'), decisionEnds, conflicts.flatMap((c) => [c.first, c]));
    for (const c of conflicts) {
      const first = read.get(`${c.first.partition}@${c.first.offset}`);
      const later = read.get(`${c.partition}@${c.offset}`);
      const fields = first && later ? diffKeys(comparable(first), comparable(later)) : [];
      report(c.log_id, 'kafka_conflict', `record ${c.partition}@${c.offset} differs from the first record for this log_id (${c.first.partition}@${c.first.offset}) on ${fields.length ? fields.join(', ') : 'the message body'}`);
    }
  }

  // Chains over the topic, and agreement with Postgres.
  const byChain = new Map<number, Array<[number, KafkaEntry]>>();
  for (const item of kafkaEntries) {
    const list = byChain.get(item[1].partition_chain) ?? [];
    list.push(item);
    byChain.set(item[1].partition_chain, list);
  }
  for (const [partition, list] of byChain) {
    list.sort((a, b) => a[0] - b[0]);
    let prev = GENESIS_HASH;
    for (const [logId, entry] of list) {
      if (entry.prev_hash !== prev) report(logId, 'kafka_chain', `prev_hash ${entry.prev_hash.slice(0, 12)}… is not the previous record's hash ${prev.slice(0, 12)}… in partition ${partition}`);
      prev = entry.entry_hash;
    }
  }
  const notInSnapshot: number[] = [];
  for (const [logId, entry] of kafkaEntries) {
    const row = dbRows.get(logId);
    if (!row) notInSnapshot.push(logId);
    else if (row.compare !== entry.compare) {
      report(logId, 'kafka_vs_db', 'the record on the decisions topic and the Postgres row differ');
    }
  }
  if (notInSnapshot.length > 0) {
    // Written after the Postgres snapshot (the consumer is running), or missing: look again.
    const fresh = await pool.query<PolicyLogRow>(`SELECT ${ROW_COLUMNS} FROM policy_log WHERE log_id = ANY($1::bigint[])`, [notInSnapshot]);
    const rows = new Map(fresh.rows.map((r) => [r.log_id, r]));
    for (const logId of notInSnapshot) {
      const row = rows.get(logId);
      const entry = kafkaEntries.get(logId)!;
      if (!row) report(logId, 'db_missing', `on the decisions topic (${entry.partition}@${entry.offset}) but not in policy_log`);
      else if (compareDigestOf(entryFromColumns(row)) !== entry.compare) report(logId, 'kafka_vs_db', 'the record on the decisions topic and the Postgres row differ');
    }
  }
  const missingOnKafka = new Map<string, number>();
  for (const [logId, row] of dbRows) if (!kafkaEntries.has(logId)) missingOnKafka.set(row.command_id, logId);


  // (3) The replay's decisions against the recorded ones.
  counts.customer_events = outcome.customerEvents;
  counts.undecodable_customer_events = outcome.undecodable;
  counts.dead_lettered_customer_events = outcome.deadLettered;
  counts.duplicate_commands = outcome.duplicateCommands;
  counts.pending_commands = outcome.pending.length;
  const pending = new Set(outcome.pending);
  for (const e of outcome.errors) report(recorded.get(e.correlationId)?.log_id ?? null, 'replay_error', `${e.eventType} ${e.position} of ${e.customerId}: ${e.error}`);
  // Replays that differ are described once the pass is over, from a second replay of their customers.
  const mismatches: Array<{ found: Recorded; correlationId: string; customerId: string }> = [];
  for (const [correlationId, digest, partition, offset, decidedFor] of outcome.decided) {
    counts.decisions_replayed++;
    const found = recorded.get(correlationId);
    if (!found) {
      report(null, 'replay_missing', `command ${correlationId} (${partition}@${offset}, customer ${decidedFor}) was consumed but has no decision on the decisions topic`);
      continue;
    }
    found.seen = true;
    if (found.replay === digest) continue;
    if (max - divergences.length - mismatches.length > 0) mismatches.push({ found, correlationId, customerId: decidedFor });
    else report(found.log_id, 'replay', `differs from the recorded decision`);
  }
  if (mismatches.length > 0) {
    const again = await replayCustomerEvents(kafka, codec, { ...replayScope, customers: [...new Set(mismatches.map((m) => m.customerId))], keep: mismatches.map((m) => m.correlationId) });
    const replayedEntries = new Map(again.kept.map((entry) => [entry.correlation_id, entry]));
    const positions = mismatches.map((m) => kafkaEntries.get(m.found.log_id)!);
    const recordedEntries = await decisionsAt(kafka, codec, topics.name('policyDecisions'), decisionEnds, positions);
    for (const [i, { found, correlationId }] of mismatches.entries()) {
      const entry = recordedEntries.get(`${positions[i]!.partition}@${positions[i]!.offset}`);
      const expected = replayedEntries.get(correlationId);
      if (!entry || !expected) {
        report(found.log_id, 'replay', 'differs from the recorded decision (the record could not be read again)');
        continue;
      }
      const recordedFields = replayFields(entry) as Record<string, unknown>;
      const replayed = replayFields(expected) as Record<string, unknown>;
      const fields = Object.keys(replayed).filter((k) => canonicalJson(replayed[k]) !== canonicalJson(recordedFields[k]));
      const recordedCode = entry.error_code ?? null;
      const summary =
        entry.decision !== expected.decision || recordedCode !== expected.error_code
          ? `recorded ${entry.decision}${recordedCode ? `/${recordedCode}` : ''}, replay ${expected.decision}${expected.error_code ? `/${expected.error_code}` : ''}`
          : rulesOf(entry) !== rulesOf(expected)
            ? `rule outcomes differ: recorded ${rulesOf(entry)}; replay ${rulesOf(expected)}`
            : 'same decision';
      report(found.log_id, 'replay', `${summary}; differing fields: ${fields.join(', ')}`);
    }
  }
  for (const [correlationId, found] of recorded) {
    if (!found.seen && !pending.has(correlationId)) {
      // A command past the committed offset may have been decided already; only a decision with
      // no command at all, or one for a command the replay reached, is a divergence.
      report(found.log_id, 'replay_orphan', `decision for command ${correlationId} has no matching command on customer-events that the replay decided`);
    }
  }
  // A command's records are all on its customer's partition, so once one is past the committed
  // offset the last one is too: pending commands are the ones in flight.
  const commandsSeen = missingOnKafka.size === 0 ? new Set<string>() : new Set([...outcome.decided.map((d) => d[0]), ...pending, ...outcome.errors.filter((e) => e.eventType === 'SendRequested').map((e) => e.correlationId)]);
  for (const [commandId, logId] of missingOnKafka) {
    const seen = commandsSeen.has(commandId);
    if (seen && pending.has(commandId)) continue; // in flight: not committed yet
    if (!seen && customerId && dbRows.get(logId)?.customer_id !== customerId) continue;
    report(logId, 'kafka_missing', `policy_log row for command ${commandId} has no record on the decisions topic`);
  }

  const elapsed = Date.now() - started;
  phases.other = Math.max(0, elapsed - phases.replay_start - phases.replay - Math.max(phases.postgres, phases.decisions));
  const events = counts.db_rows + decisionsRead + outcome.read;
  return {
    ok: divergenceCount === 0,
    customer_id: customerId ?? null,
    divergence_count: divergenceCount,
    divergences,
    counts,
    events,
    elapsed_ms: elapsed,
    events_per_second: Math.round(events / Math.max(elapsed / 1000, 0.001)),
    phases_ms: phases,
  };
}

export function formatVerifyReport(report: VerifyReport): string {
  const c = report.counts;
  const lines = [
    `Policy log verification${report.customer_id ? ` (customer ${report.customer_id})` : ''}: ${report.ok ? 'CLEAN' : `${report.divergence_count} DIVERGENCE(S)`}`,
    `  postgres   ${c.db_rows} rows in ${c.db_chains} partition chains`,
    `  kafka      ${c.kafka_decisions} decision records (${c.kafka_duplicates} identical duplicates)`,
    `  replay     ${c.customer_events} customer events, ${c.decisions_replayed} decisions re-run, ${c.duplicate_commands} repeated commands, ${c.pending_commands} pending`,
    `  ${report.events} events in ${(report.elapsed_ms / 1000).toFixed(2)} s (${report.events_per_second} events/s)`,
  ];
  if (report.divergences.length > 0) {
    lines.push('Divergences:');
    for (const d of report.divergences) lines.push(`  log_id ${d.log_id ?? '-'}  ${d.check.padEnd(14)} ${d.detail}`);
    if (report.divergence_count > report.divergences.length) lines.push(`  … and ${report.divergence_count - report.divergences.length} more`);
  }
  return `${lines.join('\n')}\n`;
}
