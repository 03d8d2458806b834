// Issue 28: what the policy stage pays per batch to store a busy customer's state. A scale-plan
// customer at 2,000 sends a day carries that day of sends and its contacts in its state (hundreds
// of kilobytes), and its sends often come one to a batch. Measured in one run, on two customers
// with the same day of history: the state stored whole every batch (POLICY_SNAPSHOT_EVERY_EVENTS=1,
// how it was before) beside a snapshot and a tail (the configured default; docs/decisions.md
// "Policy state snapshots"). In-process: the consumer's own batch handler (decideSends) against
// real Postgres and the real schema registry, so what is timed is its decide, encode and write.
// CPU is this process's (the handler) and its Postgres backend's (one connection, from /proc).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@gw/config';
import { createPool, sql, z, type Pool } from '@gw/db';
import { EventCodec, newEventId, Topics, type AnyEvent, type SendRequested } from '@gw/events';
import { createMetrics } from '@gw/observability';
import { createPolicy, type PolicyEvent } from '@gw/policy';
import { readPolicyState, toFactRecord } from '@gw/policy-log';
import { decideSends } from '../services/policy/src/decide-sends/handler.ts';
import { baseConfig, isolate } from '../test/support/infra.ts';
import { OPEN_LIMITS } from '../test/support/accounts.ts';
import { benchLogger } from './lib/logger.ts';
import { defer, deleteSubjects } from './lib/teardown.ts';

const DAY_MS = 86_400_000;
const TICK_MS = 10; // /proc's clock tick (CLK_TCK 100 on Linux)

interface Mode {
  name: string;
  snapshotEveryEvents: number;
}

export interface PolicyStateRow {
  mode: string;
  stateKiB: number;
  batches: number;
  wallMsPerBatch: number;
  handlerCpuMsPerBatch: number;
  postgresCpuMsPerBatch: number;
}

/** The backend process of the pool's one connection: its CPU ticks (user + system) from /proc. */
function backendTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function send(customerId: string, n: number, at: number): SendRequested {
  return {
    event_id: newEventId(),
    correlation_id: `cmd_${customerId}_${n}`,
    occurred_at: at,
    customer_id: customerId,
    instance_id: `ins_${n % 4}`,
    instance_name: `bench-${n % 4}`,
    message_id: `msg_${customerId}_${n}`,
    // A new person for every send of the day: the contact set grows as the day's sends do.
    phone: `+1415${String(1_000_000 + n).padStart(7, '0')}`,
    message: `Your order ${100_000 + n} has shipped and arrives tomorrow.`,
    message_purpose: 'transactional',
    source: 'api',
    idempotency_key: null,
  };
}

function onboarding(customerId: string, at: number): PolicyEvent[] {
  const { daily, monthly, burst, refillPerMinute, recipientIntervalMs, bulkRecipients, reason, by } = OPEN_LIMITS;
  return [
    { type: 'CustomerRegistered', customerId, at },
    { type: 'PlanChanged', customerId, at, planId: 'scale', validUntil: at + 30 * DAY_MS, by, reason },
    { type: 'LimitsOverridden', customerId, at, daily, monthly, velocity: { burst, refillPerMinute, recipientMinIntervalMs: recipientIntervalMs }, bulk: { maxDistinctRecipients: bulkRecipients }, grantedBy: by, reason },
  ];
}

async function measure(mode: Mode, partition: number, setup: { pool: Pool; codec: EventCodec; topics: Topics; history: number; batches: number }): Promise<PolicyStateRow> {
  const { pool, codec, topics } = setup;
  const backend = await pool.oneFirst(sql.type(z.object({ pid: z.number() }))`SELECT pg_backend_pid() AS pid`);
  const handle = decideSends(
    { codec, pool, topics, logger: benchLogger('bench-policy-state'), metrics: createMetrics('bench-policy-state', false) },
    { ...loadConfig().policy, snapshotEveryEvents: mode.snapshotEveryEvents, policy: createPolicy() },
  );
  const customerId = `cus_state_${partition}`;
  const topic = topics.name('customerEvents');
  let offset = 0n;
  const batch = async (events: AnyEvent[]) => {
    const decoded = events.map((event) => ({ offset: offset++, event }));
    await handle(decoded as Parameters<typeof handle>[0], { topic, partition, heartbeat: async () => undefined, nextOffset: offset });
  };

  // A day of history at the pace of 2,000 sends a day, folded through the same handler in batches of 200.
  const start = Date.now() - 2 * DAY_MS;
  const gap = Math.floor(DAY_MS / Math.max(setup.history, 1));
  await batch(onboarding(customerId, start).map((fact) => ({ type: 'PolicyInputRecorded', payload: toFactRecord(fact, `op_${customerId}`) }) as AnyEvent));
  for (let from = 0; from < setup.history; from += 200) {
    const chunk = Array.from({ length: Math.min(200, setup.history - from) }, (_, i) => ({ type: 'SendRequested', payload: send(customerId, from + i, start + (from + i) * gap) }) as AnyEvent);
    await batch(chunk);
  }
  // The customer's whole state as JSON (what "whole every batch" writes), snapshot and tail folded.
  const stateBytes = JSON.stringify(await readPolicyState(pool, customerId)).length;

  // Timed: one send per batch, the next sends of the day.
  const cpuBefore = process.cpuUsage();
  const ticksBefore = backendTicks(backend);
  const started = performance.now();
  for (let i = 0; i < setup.batches; i++) {
    const n = setup.history + i;
    await batch([{ type: 'SendRequested', payload: send(customerId, n, start + n * gap) } as AnyEvent]);
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const postgresMs = (backendTicks(backend) - ticksBefore) * TICK_MS;
  return {
    mode: mode.name,
    stateKiB: Math.round(stateBytes / 1024),
    batches: setup.batches,
    wallMsPerBatch: wallMs / setup.batches,
    handlerCpuMsPerBatch: (cpu.user + cpu.system) / 1000 / setup.batches,
    postgresCpuMsPerBatch: postgresMs / setup.batches,
  };
}

export async function policyStateBench(options: { smoke?: boolean } = {}): Promise<PolicyStateRow[]> {
  console.log('\n== policy stage: storing a busy customer\'s state (issue 28)');
  const history = options.smoke ? 50 : Number(process.env.BENCH_STATE_HISTORY ?? 2_000);
  const batches = options.smoke ? 10 : Number(process.env.BENCH_STATE_BATCHES ?? 200);
  const isolation = await isolate();
  defer('policy-state: database and subjects', async () => {
    await deleteSubjects(baseConfig.schemaRegistryUrl, isolation.topicPrefix);
    await isolation.cleanup();
  });
  const topics = new Topics(isolation.topicPrefix, 6);
  const codec = new EventCodec(baseConfig.schemaRegistryUrl, topics);
  await codec.init(['SendRequested', 'PolicyInputRecorded', 'SendDecided', 'PolicyEventEmitted', 'GatewayEventEmitted']);
  const modes: Mode[] = [
    { name: 'whole state every batch (before)', snapshotEveryEvents: 1 },
    { name: `snapshot and tail (every ${loadConfig().policy.snapshotEveryEvents} events)`, snapshotEveryEvents: loadConfig().policy.snapshotEveryEvents },
  ];
  const rows: PolicyStateRow[] = [];
  // Two rounds, alternating, each on a customer of its own (a partition each, one connection each).
  for (let round = 0; round < 2; round++) {
    for (const [index, mode] of modes.entries()) {
      const pool = await createPool(isolation.databaseUrl, { maxConnections: 1 });
      try {
        const row = await measure(mode, 1 + round * modes.length + index, { pool, codec, topics, history, batches });
        rows.push(row);
        console.log(
          `policy-state: ${row.mode.padEnd(34)} state ${String(row.stateKiB).padStart(5)} KiB  ${row.wallMsPerBatch.toFixed(2).padStart(7)} ms/batch  handler CPU ${row.handlerCpuMsPerBatch.toFixed(2).padStart(6)} ms  Postgres CPU ${row.postgresCpuMsPerBatch.toFixed(2).padStart(6)} ms  (one send a batch, ${history} sends of history, ${batches} batches)`,
        );
      } finally {
        await pool.end();
      }
    }
  }
  return rows;
}
