// The fault suite: sustained sends from retrying clients (replies to people who wrote in first, as
// the number guard lets a freshly paired instance send: contacts.ts) while services are killed with SIGKILL
// (one at a time and several together), the broker restarts and Postgres drops our connections;
// then the outcome is compared with what the manager (the simulator's ledger) and a webhook
// receiver saw. Used by `make chaos` (test/chaos/main.ts) and, shorter, by the e2e tier
// (test/e2e/chaos.e2e.test.ts).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPool, sql, z, type Pool } from '@gw/db';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { startStack, type Stack, type StackProcess, type StackServiceName } from '../support/stack.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';
import { finalAnswers, sustainedSends, type MessageRecord } from './clients.ts';
import { chaosLimits, RECIPIENTS_PER_ACCOUNT, recipientsOf, writeIn } from './contacts.ts';
import { assignments, lagAroundFaults, latencyByPhase, sampleLag, takenOver, type Assignment, type FaultWindow, type LagAroundFault, type PhaseLatency } from './observations.ts';

/** DeliveryFailed's reason for a send the resolver cannot settle (services/delivery/src/resolve/resolver.ts OUTCOME_UNKNOWN). */
const OUTCOME_UNKNOWN = 'outcome_unknown';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

export type Fault =
  /**
   * `untilTakenOver`: the killed processes stay down until the other processes of their groups
   * hold all their partitions (else they are started again 500 ms later, usually before the group
   * has noticed, and the partitions go straight back to them).
   */
  | { kind: 'kill'; services: StackProcess[]; interruptSends?: boolean; untilTakenOver?: boolean }
  | { kind: 'drop-postgres-connections' }
  /** The single local broker (deploy/local/infra.sh) stopped and started. */
  | { kind: 'restart-broker' }
  /** One node of the local cluster (deploy/cluster/kafka-cluster.sh) killed with SIGKILL, started again `downMs` later. */
  | { kind: 'kill-broker'; node: number; downMs: number };

export interface ChaosOptions {
  faults: Fault[];
  clients: number;
  /** Sends before the first fault and between faults. */
  pauseMs: number;
  /** After the last fault, how long sends go on before the clients stop. */
  tailMs: number;
  log?: (line: string) => void;
  /** Processes of each service (2 on the cluster: make cluster-chaos). */
  replicas?: number;
  /** Settings for every process, over the suite's own (e.g. a more talkative LOG_LEVEL). */
  env?: Record<string, string>;
}

export interface ChaosCounts {
  messages: number;
  sent: number;
  lost: number;
  sent_twice: number;
  without_final_answer: number;
  /** Answered 502 for any reason but `outcome_unknown`. */
  failed: number;
  /**
   * Answered 502 `outcome_unknown`: the gateway could not tell whether the manager sent it and will
   * not send it again (an honest answer, not a lost message). Here the manager's store is on (the
   * simulator as Evolution's .env.example sets it up), so every open send can be settled for sure.
   */
  outcome_unknown: number;
  refused: number;
  webhooks_missing: number;
  two_webhook_delivery_ids: number;
  unexpected_at_manager: number;
  dead_letters: number;
}

export interface ChaosReport {
  counts: ChaosCounts;
  /** Per interrupted delivery: sends left open by the kill, and seconds from the restart until none was open. */
  resolutions: Array<{ open_at_restart: number; resolved_after_s: number }>;
  /** Per fault: what was done and how long the stack took to be ready again. */
  faults: Array<{ fault: string; recovered_after_s: number }>;
  restarts_by_supervisor: number;
  /** From the first person writing in to the policy knowing every one (before the load). */
  wrote_in_s: number;
  answer_p99_ms: number;
  elapsed_s: number;
  /** Final answers given by each API process (their index). */
  answers_by_api: number[];
  /** Answer latency before the first fault and during each. */
  latency: PhaseLatency[];
  /** Consumer lag (records, every group summed) around each fault. */
  lag: LagAroundFault[];
  /** Partitions each process took, in time order, seconds from the start of the run. */
  assignments: Array<Omit<Assignment, 'at' | 'held'> & { at_s: number }>;
}

const ENV = {
  SEND_DEADLINE_MS: '10000',
  DELIVERY_SEND_TIMEOUT_MS: '2000',
  IDEMPOTENT_REAPPEND_AFTER_MS: '3000',
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_POLL_MS: '200',
  // A webhook attempt cut off by a kill is posted again this soon (same delivery id).
  WEBHOOK_LEASE_MS: '5000',
  WEBHOOK_RETRY_DELAYS_MS: '0,1000,2000,4000,8000',
  WEBHOOK_RETRY_JITTER: '0',
  // Lag sampled often enough to see it rise and fall around a fault.
  LAG_POLL_MS: '1000',
  // An open send absent from the manager's store is sent again only this long past the send
  // timeout (a slow manager may still carry it out: docs/decisions.md "A send whose outcome is
  // unknown"). The slowest send here is a `stall` of STALL_MS, so 2 s + 5 s is well past it, and
  // short enough that the sends a kill interrupted are settled within the run.
  DELIVERY_SEND_SETTLE_MS: '5000',
};
/** How long the injected `stall`, `timeout` and `hang_unsent` faults hold a send (longer than DELIVERY_SEND_TIMEOUT_MS). */
const STALL_MS = 3_000;
const SERVICES: StackServiceName[] = ['api', 'policy', 'delivery', 'instance-events', 'webhooks'];
const KAFKA_CLUSTER = 'deploy/cluster/kafka-cluster.sh';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** As a supervisor (Kubernetes, systemd) would: a service that exited on its own is started again. */
function supervise(stack: Stack, log: (line: string) => void) {
  let restarts = 0;
  let stopped = false;
  const restarting = new Set<StackProcess>();
  const loop = (async () => {
    while (!stopped) {
      for (const name of stack.exited()) {
        if (restarting.has(name)) continue;
        restarting.add(name);
        restarts++;
        log(`supervisor: ${name} exited; starting it again`);
        void (async () => {
          for (;;) {
            try {
              await stack.start(name);
              break;
            } catch {
              if (stopped) break;
              await sleep(2_000);
            }
          }
          restarting.delete(name);
        })();
      }
      await sleep(500);
    }
  })();
  return {
    restarts: () => restarts,
    idle: async () => {
      while (restarting.size > 0 || stack.exited().length > 0) await sleep(200);
    },
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

async function allReady(stack: Stack): Promise<void> {
  for (;;) {
    const states = await Promise.all(stack.processes.map((name) => fetch(stack.readyUrl(name), { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)));
    if (states.every(Boolean)) return;
    await sleep(250);
  }
}

async function openSends(db: Pool): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM deliveries WHERE state IN ('dispatching', 'unknown')`);
}

const OpenSend = z.object({ message_id: z.string() });

/** The sends open right now (of these ids, when given): under load new ones open all the time. */
async function openIds(db: Pool, among?: string[]): Promise<string[]> {
  const ids = among
    ? await db.anyFirst(sql.type(OpenSend)`SELECT message_id FROM deliveries WHERE state IN ('dispatching', 'unknown') AND message_id = ANY(${sql.array(among, 'text')})`)
    : await db.anyFirst(sql.type(OpenSend)`SELECT message_id FROM deliveries WHERE state IN ('dispatching', 'unknown')`);
  return [...ids];
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const stack = await startStack(SERVICES, { ...ENV, ...options.env }, { replicas: options.replicas ?? 1 });
  const lag = sampleLag(stack, 1_000);
  // One connection, as one client: dropping "the gateway's connections" spares this one alone.
  const db = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  const supervisor = supervise(stack, log);
  let receiver: WebhookReceiver | undefined;
  try {
    receiver = await startWebhookReceiver();
    const demos: DemoAccount[] = [];
    for (let i = 0; i < 3; i++) demos.push(await demoAccount(stack));
    for (const account of demos) {
      await chaosLimits(stack, account.customer_id);
      const set = await gatewayctl({ ...stack.env, ...ENV }, '--json', 'webhook', 'set', '--instance', account.instance_id, '--url', `${receiver.url}/hooks`, '--events', 'message.sent,message.failed');
      if (set.code !== 0) throw new Error(`webhook set failed: ${set.stderr}`);
    }
    const managers = await db.any(sql.type(z.object({ id: z.string(), manager_instance: z.string() }))`SELECT id, manager_instance FROM instances`);
    const managerOf = new Map(managers.map((m) => [m.id, m.manager_instance]));
    // Freshly paired instances: the load answers people who wrote in (contacts.ts), as a guarded gateway's traffic is.
    const accounts = demos.map((account, i) => ({ ...account, manager: managerOf.get(account.instance_id)!, recipients: recipientsOf(i) }));
    const writingStarted = Date.now();
    await writeIn(stack, db, accounts);
    const wroteInS = (Date.now() - writingStarted) / 1000;
    log(`${accounts.length * RECIPIENTS_PER_ACCOUNT} people wrote in; the policy knew them all after ${wroteInS.toFixed(1)} s`);

    let sending = true;
    const load = sustainedSends(
      { apiUrls: () => stack.apiUrls, accounts, clients: options.clients, runId: randomBytes(3).toString('hex'), requestTimeoutMs: 20_000, giveUpAfterMs: 180_000 },
      () => sending,
    );

    const faultLog: ChaosReport['faults'] = [];
    const windows: FaultWindow[] = [];
    const resolutions: ChaosReport['resolutions'] = [];
    await sleep(options.pauseMs);
    for (const fault of options.faults) {
      const began = Date.now();
      let label: string;
      if (fault.kind === 'kill') {
        label = `SIGKILL ${fault.services.join(' + ')}`;
        if (fault.interruptSends) {
          // Sends under way at the kill, each outlasting the send timeout, of three kinds that must
          // all end sent, once: `stall`, a slow manager that carries the send out after the caller
          // left (what Evolution does: its Express route is not cancelled), found in its store by
          // the resolver; `timeout`, a manager that sent at once and answers too late; and
          // `hang_unsent`, a manager that dies with the request (never sent), resent once the
          // attempt has settled (DELIVERY_SEND_SETTLE_MS).
          const [a, b, c] = accounts;
          await stack.simulator.call('PUT', '/sim/faults', { body: { instance: a!.manager, mode: 'stall', delay_ms: STALL_MS, count: 5 } });
          await stack.simulator.call('PUT', '/sim/faults', { body: { instance: b!.manager, mode: 'timeout', delay_ms: STALL_MS, count: 5 } });
          await stack.simulator.call('PUT', '/sim/faults', { body: { instance: c!.manager, mode: 'hang_unsent', delay_ms: STALL_MS, count: 5 } });
          await sleep(1_000);
        }
        const killedAt = Date.now();
        await Promise.all(fault.services.map((name) => stack.kill(name, 'SIGKILL')));
        if (fault.interruptSends) {
          for (const account of accounts) await stack.simulator.call('PUT', '/sim/faults', { body: { instance: account.manager, mode: 'none' } });
        }
        // The sends the dead process left open; resolved by its successor.
        const killsDelivery = fault.services.some((name) => name.startsWith('delivery'));
        const open = killsDelivery ? await openIds(db) : [];
        await sleep(500);
        if (fault.untilTakenOver) {
          // The group notices a dead member when its session times out (CONSUMER_SESSION_TIMEOUT_MS).
          const waited = Date.now();
          let held = false;
          while (!(held = takenOver(assignments(stack), fault.services, killedAt)) && Date.now() - waited < 90_000) await sleep(500);
          const after = `${((Date.now() - killedAt) / 1000).toFixed(1)} s`;
          log(`${fault.services.join(' + ')}: ${held ? `partitions held by the other processes after ${after}` : `partitions still not all held by the other processes after ${after}; starting them again`}`);
        }
        await Promise.all(fault.services.map((name) => stack.start(name)));
        if (killsDelivery) {
          const restarted = Date.now();
          while ((await openIds(db, open)).length > 0 && Date.now() - restarted < 120_000) await sleep(250);
          resolutions.push({ open_at_restart: open.length, resolved_after_s: (Date.now() - restarted) / 1000 });
        }
      } else if (fault.kind === 'drop-postgres-connections') {
        label = 'pg_terminate_backend of the gateway\'s connections';
        await db.query(sql.type(z.object({ pg_terminate_backend: z.boolean() }))`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      } else if (fault.kind === 'kill-broker') {
        label = `SIGKILL Kafka node ${fault.node}, started again after ${fault.downMs / 1000} s`;
        await run('bash', [KAFKA_CLUSTER, 'kill', String(fault.node)], { cwd: ROOT });
        await sleep(fault.downMs);
        await run('bash', [KAFKA_CLUSTER, 'start-node', String(fault.node)], { cwd: ROOT });
      } else {
        label = 'broker restart';
        await run('bash', ['deploy/local/infra.sh', 'stop', 'kafka'], { cwd: ROOT });
        await sleep(2_000);
        await run('bash', ['deploy/local/infra.sh', 'start', 'kafka'], { cwd: ROOT });
      }
      await supervisor.idle();
      await allReady(stack);
      faultLog.push({ fault: label, recovered_after_s: (Date.now() - began) / 1000 });
      windows.push({ fault: label, began, ready: Date.now() });
      log(`${label}: ready again after ${((Date.now() - began) / 1000).toFixed(1)} s`);
      await sleep(options.pauseMs);
    }
    await sleep(options.tailMs);
    sending = false;
    const records = await load;
    log(`${records.length} messages sent by ${options.clients} retrying clients; waiting for the pipeline to settle`);

    // The resolution window: open sends resolved, webhooks delivered, then one more answer per message.
    const settleStarted = Date.now();
    while ((await openSends(db)) > 0 && Date.now() - settleStarted < 60_000) await sleep(500);
    await waitWebhooks(receiver, records, 60_000);
    await finalAnswers({ apiUrls: () => stack.apiUrls, accounts, clients: options.clients, runId: '', requestTimeoutMs: 20_000, giveUpAfterMs: 0 }, records);

    const ledger: Array<{ text: string; instance: string }> = (await stack.simulator.call('GET', '/sim/ledger')).body.messages;
    const deadLetters = await gatewayctl(stack.env, '--json', 'dlq', 'list');
    const counts = compare(records, ledger, receiver, (JSON.parse(deadLetters.stdout.trim() || '[]') as unknown[]).length);
    const answered = records.filter((r) => r.elapsedMs !== null).map((r) => r.elapsedMs!).sort((a, b) => a - b);
    await lag.stop();
    const answersByApi = stack.apiUrls.map((_, i) => records.filter((r) => r.answeredBy === i).length);
    return {
      answers_by_api: answersByApi,
      latency: latencyByPhase(records, windows),
      lag: lagAroundFaults(lag.samples, windows),
      assignments: assignments(stack).map(({ at, held: _held, ...rest }) => ({ ...rest, at_s: Math.round((at - started) / 100) / 10 })),
      counts,
      resolutions,
      faults: faultLog,
      restarts_by_supervisor: supervisor.restarts(),
      wrote_in_s: wroteInS,
      answer_p99_ms: answered[Math.floor(answered.length * 0.99)] ?? 0,
      elapsed_s: (Date.now() - started) / 1000,
    };
  } finally {
    await lag.stop();
    await supervisor.stop();
    await receiver?.close();
    await db.end().catch(() => undefined);
    await stack.stop();
  }
}

/** Waits until every sent message's message.sent webhook arrived (or the time is up). */
async function waitWebhooks(receiver: WebhookReceiver, records: MessageRecord[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = new Set(receiver.received.filter((r) => r.body.event === 'message.sent').map((r) => String(r.body.message_id)));
    if (records.every((r) => r.final !== 'sent' || (r.messageId !== null && seen.has(r.messageId)))) return;
    if (Date.now() > deadline) return;
    await sleep(500);
  }
}

function compare(records: MessageRecord[], ledger: Array<{ text: string }>, receiver: WebhookReceiver, deadLetters: number): ChaosCounts {
  const atManager = new Map<string, number>();
  for (const m of ledger) atManager.set(m.text, (atManager.get(m.text) ?? 0) + 1);
  const ours = new Set(records.map((r) => r.text));
  const deliveryIds = new Map<string, Set<string>>();
  for (const request of receiver.received) {
    if (request.body.event !== 'message.sent') continue;
    const id = String(request.body.message_id);
    deliveryIds.set(id, (deliveryIds.get(id) ?? new Set()).add(String(request.headers['x-chat-gateway-delivery'])));
  }
  const sent = records.filter((r) => r.final === 'sent');
  return {
    messages: records.length,
    sent: sent.length,
    // Answered sent (or left unanswered) yet never reached the manager; a failure answered (outcome_unknown too) is not lost.
    lost: records.filter((r) => r.final !== 'failed' && r.final !== 'refused' && !atManager.has(r.text)).length,
    sent_twice: [...atManager.values()].filter((n) => n > 1).length,
    without_final_answer: records.filter((r) => r.final === null).length,
    failed: records.filter((r) => r.final === 'failed' && r.reason !== OUTCOME_UNKNOWN).length,
    outcome_unknown: records.filter((r) => r.final === 'failed' && r.reason === OUTCOME_UNKNOWN).length,
    refused: records.filter((r) => r.final === 'refused').length,
    webhooks_missing: sent.filter((r) => !r.messageId || !deliveryIds.has(r.messageId)).length,
    two_webhook_delivery_ids: [...deliveryIds.values()].filter((ids) => ids.size > 1).length,
    unexpected_at_manager: [...atManager.keys()].filter((text) => !ours.has(text)).length,
    dead_letters: deadLetters,
  };
}

/** The counts as the table `make chaos` prints. */
export function formatReport(report: ChaosReport): string {
  const lines = Object.entries(report.counts).map(([name, value]) => `  ${name.padEnd(28)} ${value}`);
  const faults = report.faults.map((f) => `  ${f.fault.padEnd(50)} ready again after ${f.recovered_after_s.toFixed(1)} s`);
  const resolutions = report.resolutions.map((r) => `  ${r.open_at_restart} open at the restart, none open ${r.resolved_after_s.toFixed(1)} s after it`);
  return [
    'faults:',
    ...faults,
    'interrupted sends (delivery killed mid-send):',
    ...resolutions,
    `people who wrote in known to the policy after ${report.wrote_in_s.toFixed(1)} s`,
    `restarts by the supervisor: ${report.restarts_by_supervisor}; answer p99 (first try to final answer): ${report.answer_p99_ms} ms; elapsed ${report.elapsed_s.toFixed(0)} s`,
    `final answers by API process: ${report.answers_by_api.join(' / ')}`,
    'answer latency (first try to final answer) of the messages begun in each phase:',
    ...report.latency.map((p) => `  ${p.phase.padEnd(60)} ${String(p.messages).padStart(5)} msgs  p50 ${p.p50_ms} ms  p99 ${p.p99_ms} ms  max ${p.max_ms} ms`),
    'consumer lag (records behind, all groups) around each fault:',
    ...report.lag.map((l) => `  ${l.fault.padEnd(60)} before ${l.before}  peak ${l.peak}  back after ${l.back_after_s === null ? 'never' : `${l.back_after_s} s`}`),
    'counts:',
    ...lines,
  ].join('\n');
}

/** The counts that must be zero (outcome_unknown too: with the store on, nothing here leaves a send in doubt). */
export function failures(counts: ChaosCounts): string[] {
  const mustBeZero: Array<keyof ChaosCounts> = ['lost', 'sent_twice', 'without_final_answer', 'failed', 'outcome_unknown', 'refused', 'webhooks_missing', 'two_webhook_delivery_ids', 'unexpected_at_manager', 'dead_letters'];
  return mustBeZero.filter((name) => counts[name] !== 0).map((name) => `${name}: ${counts[name]}`);
}
