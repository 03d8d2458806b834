// Builds a real policy log for the verify benchmark: operator facts and SendRequested
// commands are appended to customer-events exactly as gatewayctl (FactLog) and the API append
// them, and the real policy consumer (a service process) decides them, writing policy_log and the
// decisions topic. Only the HTTP front is skipped, which is not what the verify bench measures.
import { randomUUID } from 'node:crypto';
import { createPool, sql, z, type Pool } from '@gw/db';
import { EventCodec, newEventId, Topics, type SendRequested } from '@gw/events';
import { KafkaClient, KafkaInspector, type OutgoingRecord } from '@gw/kafka';
import type { PolicyEvent } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import { OPEN_LIMITS } from '../../test/support/accounts.ts';
import { benchLogger } from './logger.ts';

export interface LogSpec {
  brokers: string[];
  registryUrl: string;
  databaseUrl: string;
  topics: Topics;
  /** SendRequested commands to append (each becomes one policy-log entry). */
  entries: number;
  customers: number;
  /** Gives up waiting for the consumer after this long. */
  timeoutMs: number;
  /**
   * Most commands appended but not yet taken by the consumer. The consumer fetches up to 1 MB per
   * partition and appends the decisions of a whole fetch in one produce request; the decisions are
   * ~3x the size of the commands, so a deeper backlog makes that request exceed the broker's
   * message.max.bytes and the consumer dies (MESSAGE_TOO_LARGE, not restarted). Paced below it.
   */
  maxBacklog: number;
  /**
   * Event time between one customer's commands (the decider's clock is the command's time).
   * Omitted: 50 ms, the pace the compare bench has always measured; at that pace a whole log falls
   * within the rules' one-day memory, so the decider's state grows with the log (docs/benchmarks.md).
   */
  sendGapMs?: number;
  onProgress?: (line: string) => void;
}

export interface BuiltLog {
  customers: number;
  facts: number;
  commands: number;
  /** Commands whose text is promotional (content policy), and sends to a suppressed recipient. */
  marketing: number;
  suppressed: number;
  decided: { accepted: number; rejected: number; byCode: Record<string, number> };
  produceMs: number;
  /** From the first command appended to the last decision committed. */
  decideMs: number;
  totalMs: number;
  sendGapMs: number;
  /** Event time from one customer's first command to its last. */
  spanMs: number;
}

export const SUPPRESSED = '+14155550999';
const MARKETING = 'Flash sale! 20% off everything this weekend only, buy now';
const PURPOSES = ['transactional', 'operational', 'support'] as const;

/**
 * The facts an operator would append for one customer: registered, on a plan, limits opened after
 * review, one opt-out. The plan stays valid 30 days past the last command (`until`), however long
 * the log spans; OPEN_LIMITS' daily and monthly quotas stay above any pace the bench uses.
 */
function customerFacts(customerId: string, at: number, until: number): PolicyEvent[] {
  const { reason, by, daily, monthly, burst, refillPerMinute, recipientIntervalMs, bulkRecipients } = OPEN_LIMITS;
  return [
    { type: 'CustomerRegistered', customerId, at },
    { type: 'PlanChanged', customerId, at, planId: 'scale', validUntil: until + 30 * 86_400_000, by: 'bench', reason: 'bench account' },
    {
      type: 'LimitsOverridden',
      customerId,
      at,
      daily,
      monthly,
      velocity: { burst, refillPerMinute, recipientMinIntervalMs: recipientIntervalMs },
      bulk: { maxDistinctRecipients: bulkRecipients },
      grantedBy: by,
      reason,
    },
    { type: 'RecipientSuppressed', customerId, at, recipient: SUPPRESSED, source: 'manual', reason: 'asked to stop', by: 'bench' },
  ];
}

const Count = z.object({ n: z.number() });
const SequenceState = z.object({ v: z.number(), c: z.boolean() });
const DecisionSplit = z.object({ decision: z.string(), error_code: z.string().nullable(), n: z.number() });

function count(db: Pool): Promise<number> {
  return db.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log`);
}

export async function buildPolicyLog(spec: LogSpec): Promise<BuiltLog> {
  const started = Date.now();
  const say = spec.onProgress ?? (() => undefined);
  const kafka = new KafkaClient({ brokers: spec.brokers, clientId: 'bench-replay-log', logger: benchLogger('bench-replay-log') });
  const codec = new EventCodec(spec.registryUrl, spec.topics);
  const db = await createPool(spec.databaseUrl, { maxConnections: 1 });
  try {
    await kafka.ensureTopics(spec.topics.specs());
    await codec.init(['SendRequested', 'PolicyInputRecorded']);
    // The commands span `spanMs` of event time per customer and the last one is a minute old when
    // appended: no command is dated in the future, whatever the pace.
    const gap = spec.sendGapMs ?? 50;
    const spanMs = (Math.ceil(spec.entries / spec.customers) - 1) * gap;
    const base = Date.now() - 60_000 - 1000 - spanMs;
    const customers = Array.from({ length: spec.customers }, (_, i) => ({
      customerId: `cus_bench_${i}_${randomUUID().slice(0, 8)}`,
      instanceId: `ins_bench_${i}`,
      instanceName: `bench-${i}`,
    }));

    // 1. Facts first, acknowledged before any send: the consumer folds them before the sends.
    let facts = 0;
    const factRecords: OutgoingRecord[] = [];
    for (const c of customers) {
      const correlationId = `op_${randomUUID()}`;
      for (const fact of customerFacts(c.customerId, base, base + 1000 + spanMs)) {
        factRecords.push(await codec.encode('PolicyInputRecorded', toFactRecord(fact, correlationId)));
        facts++;
      }
    }
    await kafka.send(factRecords);

    // 2. The commands, as the API appends them (one customer's commands in order on its partition).
    let marketing = 0;
    let suppressed = 0;
    let lastSaid = Date.now();
    const produceStarted = Date.now();
    const CHUNK = Math.max(60, Math.min(2000, Math.floor(spec.maxBacklog / 4)));
    let inFlight: Promise<void> = Promise.resolve();
    // Ids are allocated as the consumer takes commands: a cheap gauge of how far it has got.
    const taken = async () => {
      const sequence = await db.one(sql.type(SequenceState)`SELECT last_value AS v, is_called AS c FROM policy_log_log_id_seq`);
      return sequence.c ? sequence.v : 0;
    };
    let lastTaken = 0;
    let lastMove = Date.now();
    for (let from = 0; from < spec.entries; from += CHUNK) {
      for (;;) {
        const now = await taken();
        if (now !== lastTaken) (lastTaken = now), (lastMove = Date.now());
        if (from - now <= spec.maxBacklog - CHUNK) break;
        if (Date.now() - lastMove > 60_000) throw new Error(`the policy consumer stopped taking commands at ${now}/${from} appended (see its log under .run/test-logs)`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const chunk: OutgoingRecord[] = [];
      for (let i = from; i < Math.min(from + CHUNK, spec.entries); i++) {
        const c = customers[i % customers.length]!;
        const n = Math.floor(i / customers.length);
        const isMarketing = i % 97 === 13;
        const isSuppressed = i % 89 === 7;
        if (isMarketing) marketing++;
        if (isSuppressed) suppressed++;
        const command: SendRequested = {
          event_id: newEventId(),
          correlation_id: `cmd_bench_${i}_${randomUUID().slice(0, 8)}`,
          // The decider's clock is the command's own time: one send per customer every `gap` ms.
          occurred_at: base + 1000 + n * gap,
          customer_id: c.customerId,
          instance_id: c.instanceId,
          instance_name: c.instanceName,
          message_id: `msg_bench_${i}`,
          phone: isSuppressed ? SUPPRESSED : `+1415${String(1_000_000 + (i % 5000)).padStart(7, '0')}`,
          message: isMarketing ? MARKETING : `Your order ${100_000 + i} has shipped and arrives tomorrow.`,
          message_purpose: PURPOSES[i % PURPOSES.length]!,
          source: 'api',
          idempotency_key: null,
        };
        chunk.push(await codec.encode('SendRequested', command));
      }
      // One chunk in flight while the next is encoded (the client group-commits appends).
      await inFlight;
      inFlight = kafka.send(chunk);
      if (Date.now() - lastSaid > 15_000) {
        lastSaid = Date.now();
        say(`appended ${from + chunk.length}/${spec.entries} commands, ${lastTaken} taken by the consumer`);
      }
    }
    await inFlight;
    const produceMs = Date.now() - produceStarted;
    say(`appended ${spec.entries} commands and ${facts} facts in ${(produceMs / 1000).toFixed(1)} s; waiting for the policy consumer`);

    // 3. Wait until the consumer has decided every command and committed its input offsets.
    const inspector = new KafkaInspector(spec.brokers, spec.topics.prefix);
    const customerTopic = spec.topics.name('customerEvents');
    const deadline = Date.now() + spec.timeoutMs;
    let decidedCount = 0;
    let behind = '';
    for (;;) {
      decidedCount = await count(db);
      if (decidedCount >= spec.entries) {
        const [ends, committed] = await Promise.all([inspector.endOffsets(customerTopic), inspector.committedOffsets(spec.topics.group('policy'), customerTopic)]);
        const lagging = [...ends.values()].filter((r) => r.end > 0n && committed.get(r.partition) !== r.end);
        if (lagging.length === 0) break;
        behind = `; committed offsets behind the end: ${lagging.map((r) => `${r.partition}@${committed.get(r.partition) ?? '-'}/${r.end}`).join(', ')}`;
      }
      if (Date.now() > deadline) throw new Error(`the policy consumer decided ${decidedCount}/${spec.entries} commands within ${spec.timeoutMs / 1000} s${behind}`);
      if (Date.now() - lastSaid > 15_000) {
        lastSaid = Date.now();
        say(`decided ${decidedCount}/${spec.entries} (${Math.round(decidedCount / ((Date.now() - produceStarted) / 1000))}/s since the first append)${behind}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const decideMs = Date.now() - produceStarted;
    const split = await db.any(sql.type(DecisionSplit)`SELECT decision, error_code, count(*) AS n FROM policy_log GROUP BY 1, 2`);
    const decided = { accepted: 0, rejected: 0, byCode: {} as Record<string, number> };
    for (const row of split) {
      const n = row.n;
      if (row.decision === 'accepted') decided.accepted += n;
      else {
        decided.rejected += n;
        decided.byCode[row.error_code ?? 'none'] = (decided.byCode[row.error_code ?? 'none'] ?? 0) + n;
      }
    }
    return { customers: customers.length, facts, commands: spec.entries, marketing, suppressed, decided, produceMs, decideMs, totalMs: Date.now() - started, sendGapMs: gap, spanMs };
  } finally {
    await kafka.close().catch(() => undefined);
    await db.end().catch(() => undefined);
  }
}
