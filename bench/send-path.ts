// The send-path benchmark: POST /api/send-message on the real stack (API, policy and delivery
// processes, Kafka, registry, Postgres, simulator) against a baseline measured in the same run, a
// bare fastify route doing one Kafka produce + consume round trip. Reports; never gates, except
// that every measured send must be an accepted one: a run whose sends the gateway refused
// measured refusals, and fails (assertAccepted).
//
// With the number guard (issue 27) the send path is measured twice:
// - inside conversations: every recipient wrote to the instance first (through the ingest, as
//   Evolution posts it), the purpose is `authentication` (no typing delay), pacing is the test
//   stack's milliseconds: the gateway's own speed with the guard's rules on;
// - first contacts: every send to a new person, on instances that count as established (the
//   plan's caps), with human pacing at the real defaults: bound by the typing and the gap.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { settingsSchema } from '@gw/config';
import { Topics } from '@gw/events';
import { DEFAULT_POLICY_CONFIG } from '@gw/policy';
import type { DemoAccount } from '../test/support/accounts.ts';
import { baseConfig, uniqueSuffix } from '../test/support/infra.ts';
import { send } from '../test/support/http.ts';
import type { ServiceName, Stack, StackServiceName } from '../test/support/stack.ts';
import { harnessOf, type Harness } from './lib/harness.ts';
import { formatProfiles, PROFILE_DIR, PROFILING, profileWindow, type ProcessProfile } from './lib/profile.ts';
import { backlogPoller } from './lib/backlog.ts';
import { conversationPhone, firstContactSplit, seedConversations } from './lib/conversations.ts';
import { startBaseline } from './lib/baseline.ts';
import { startFloor } from './lib/floor.ts';
import { benchLogger } from './lib/logger.ts';
import { BENCH_PROCESS, cpuSnapshot, cpuUsage, type CpuUsage } from './lib/cpu.ts';
import { runLoad, untilAnswering, type LoadOptions, type LoadResult, type LoadTarget } from './lib/load.ts';
import { histogramDelta, pick, scrape, sum, type HistogramDelta, type Sample } from './lib/prom.ts';
import { stageBreakdown, type StageBreakdown } from './lib/stages.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const OUTPUT = `${ROOT}.run/bench/send-path.json`;

export const TARGET = { sendsPerS: 500, p99Ms: 200 } as const;

export interface SendPathConfig {
  warmupS: number;
  durationS: number;
  connections: number;
  /** Per-request client timeout; above the stack's 15 s send deadline. */
  timeoutS: number;
  /** Extra environment for the stack's services, e.g. DELIVERY_CONCURRENCY=64. */
  stackEnv: Record<string, string>;
  /** One part alone; `send-path` is its three sides (baseline, floor, send) without the other parts. */
  only?: 'baseline' | 'floor' | 'send' | 'send-path' | 'compare' | 'pbx' | 'webhooks';
  /** BENCH_SMOKE=1: the first-contacts workload keeps the test stack's millisecond pacing and the run's short times. */
  smoke?: boolean;
  /** Seconds after the warm-up for its sends still under way to finish (default 1). */
  drainS?: number;
}

interface Measured {
  load: LoadResult;
  cpu: CpuUsage;
}

/** `conversations`: replies inside conversations the recipients started; `first-contacts`: every send to a new person. */
export type SendWorkload = 'conversations' | 'first-contacts';

/** The answers of a send that count as accepted (docs/decisions.md "Human pacing at delivery"). */
const ACCEPTED = ['sent', 'queued'];
/** More refused answers than this share of the measured ones fails the run: it measured refusals, not sends. */
export const MAX_REFUSED_SHARE = 0.01;

export class RefusedSends extends Error {}

/** Throws when more than MAX_REFUSED_SHARE of the measured answers were not accepted sends, naming what answered. */
export function assertAccepted(name: string, load: LoadResult): void {
  const answered = load.requests + load.errors;
  const accepted = ACCEPTED.reduce((n, word) => n + (load.classes[word] ?? 0), 0);
  const refused = answered - accepted;
  if (answered === 0) throw new RefusedSends(`${name}: nothing answered in the measured window`);
  if (refused / answered <= MAX_REFUSED_SHARE) return;
  const what = Object.entries(load.classes)
    .filter(([word]) => !ACCEPTED.includes(word))
    .sort((a, b) => b[1] - a[1])
    .map(([word, n]) => `${word}: ${n}`);
  if (load.errors > 0) what.push(`errors/timeouts: ${load.errors}`);
  throw new RefusedSends(
    `${name}: ${refused} of ${answered} measured sends (${Math.round((refused / answered) * 100)}%) were not accepted (${what.join(', ')}); ` +
      `the run measured refusals, not sends (more than ${MAX_REFUSED_SHARE * 100}% fails it). E.g. ${load.sampleFailures[0] ?? '-'}`,
  );
}

/** A send's answer in a word: its status when accepted, else "<http status> <error>[/<control>]". */
function answerOf(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { status?: unknown; error?: unknown; details?: { control?: unknown } };
    if (status >= 200 && status < 300) return String(body.status ?? 'unknown');
    return `${status} ${String(body.error ?? 'unknown')}${body.details?.control ? `/${String(body.details.control)}` : ''}`;
  } catch {
    return `${status} unparsable`;
  }
}

/** The settings that pace a send and bound its answer. */
const PACING_SETTINGS = ['DELIVERY_TYPING_MS_PER_CHAR', 'DELIVERY_TYPING_MIN_MS', 'DELIVERY_TYPING_MAX_MS', 'DELIVERY_SEND_GAP_MS', 'SEND_DEADLINE_MS', 'DELIVERY_SEND_TIMEOUT_MS'] as const;

/** Human pacing and the send deadline at the settings' defaults (libs/config), over the test stack's milliseconds. */
export function realPacingEnv(): Record<string, string> {
  return Object.fromEntries(PACING_SETTINGS.map((name) => [name, String(settingsSchema.shape[name].parse(undefined))]));
}

/**
 * The first-contacts workload's times: a send types up to 12 s and the API answers within 10 s, so
 * the warm-up must outlast a send, its sends must finish before the measured window, and the
 * window must hold a few sends per connection. The smoke keeps its times (and millisecond pacing).
 */
function pacedConfig(config: SendPathConfig): SendPathConfig {
  if (config.smoke) return config;
  const deadlineS = Number(realPacingEnv().SEND_DEADLINE_MS) / 1000;
  return { ...config, warmupS: Math.max(config.warmupS, 15), durationS: Math.max(config.durationS, 30), drainS: deadlineS + 2 };
}

/** The recipients who write to each instance before the conversations workload (each pair at most once per 6 s at 1,000 sends/s over 24 instances). */
const CONTACTS_PER_INSTANCE = () => Number(process.env.BENCH_CONTACTS_PER_INSTANCE ?? 250);

interface ServiceMetricsSummary {
  http: HistogramDelta;
  eventsProcessed: Record<string, number>;
  /** Highest backlog (high watermark - committed offset) seen while the load ran, by group. */
  peakBacklog: Record<string, number>;
  eventLoopLagP99Ms: Record<string, number>;
  serviceCpuS: Record<string, number>;
}

const once = <T>(fn: () => Promise<T>) => {
  let done: Promise<T> | undefined;
  return () => (done ??= fn());
};

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

async function measure(target: LoadTarget, config: SendPathConfig, during?: { start(): Promise<void>; stop(): Promise<void> }): Promise<Measured> {
  const base: Omit<LoadOptions, 'durationS'> = { connections: config.connections, timeoutS: config.timeoutS };
  await untilAnswering(target, 60_000);
  console.log(`bench: ${target.name}: warm-up ${config.warmupS} s, ${config.connections} connections`);
  const warm = await runLoad(target, { ...base, durationS: config.warmupS });
  console.log(`bench: ${target.name}: warm-up done (${warm.ok}/${warm.requests} 2xx); measuring ${config.durationS} s`);
  if (warm.ok === 0) throw new Error(`${target.name}: no 2xx during warm-up; e.g. ${warm.sampleFailures[0] ?? `${warm.errors} errors`}`);
  await new Promise((r) => setTimeout(r, (config.drainS ?? 1) * 1000)); // let the warm-up's in-flight requests drain
  await during?.start();
  const before = cpuSnapshot();
  const load = await runLoad(target, { ...base, durationS: config.durationS });
  const cpu = cpuUsage(before, cpuSnapshot());
  await during?.stop();
  return { load, cpu };
}

async function runBaseline(config: SendPathConfig): Promise<Measured> {
  const prefix = `bench.${uniqueSuffix()}.`;
  const brokers = baseConfig.kafkaBrokers;
  const logger = benchLogger('bench-baseline');
  const baseline = await startBaseline({ brokers, logger, prefix, partitions: 6, replyTimeoutMs: config.timeoutS * 1000 });
  const stop = once(async () => {
    await baseline.stop();
    await deleteKafkaState(brokers, [prefix]);
  });
  defer('baseline server, topic and group', stop);
  console.log(`bench: baseline listening on ${baseline.url} (topic ${baseline.topic}, 6 partitions, group ${baseline.groupId})`);
  try {
    return await measure(
      {
        name: 'baseline',
        url: baseline.url,
        path: '/echo',
        headers: {},
        body: (n) => ({ n, text: `bench baseline record ${n}` }),
      },
      config,
    );
  } finally {
    await stop();
  }
}

/**
 * The send path's hops with none of the work (bench/lib/floor.ts): what the target is possible
 * against at all on this machine, whatever the services do.
 */
async function runFloor(config: SendPathConfig): Promise<Measured & { webhooks: { posted: number; failed: number }; profiles: ProcessProfile[] }> {
  const prefix = `bench.${uniqueSuffix()}.`;
  const brokers = baseConfig.kafkaBrokers;
  const floor = await startFloor({ brokers, logger: benchLogger('bench-floor'), prefix, partitions: 6 });
  const window = profileWindow();
  const stop = once(async () => {
    await floor.stop();
    await deleteKafkaState(brokers, [prefix]);
  });
  defer('floor processes, topics and groups', stop);
  console.log(`bench: floor (the send path's processes and hops, no work) listening on ${floor.url}`);
  let result: Measured & { webhooks: { posted: number; failed: number } };
  try {
    const customers = Number(process.env.BENCH_CUSTOMERS ?? 24);
    const measured = await measure(
      { name: 'floor', url: floor.url, path: '/send', headers: {}, body: (n) => ({ customer: `c${n % customers}`, phone: `+1415555${String(n % 10_000).padStart(4, '0')}`, message: `bench message ${n}` }) },
      config,
      { start: async () => window.start(), stop: async () => window.stop() },
    );
    result = { ...measured, webhooks: floor.webhooks() };
  } finally {
    await stop();
  }
  // The stage processes have exited: their profiles are written.
  return { ...result, profiles: window.read() };
}

function metricsUrls(stack: Stack): Record<ServiceName, string> {
  const ops = (name: ServiceName) => stack.readyUrl(name).replace(/\/readyz$/, '/metrics');
  return { api: `${stack.apiUrl}/metrics`, policy: ops('policy'), delivery: ops('delivery') };
}

async function scrapeAll(urls: Record<ServiceName, string>): Promise<Record<ServiceName, Sample[]>> {
  const [api, policy, delivery] = await Promise.all([scrape(urls.api), scrape(urls.policy), scrape(urls.delivery)]);
  return { api, policy, delivery };
}

/** The send path on a stack of this checkout, or of `root` (the commit before a change, for the side-by-side figures). */
/**
 * The send path on a stack of this checkout, or of `root` (the commit before a change, for the
 * side-by-side figures); `profile`: read its services' CPU profiles (BENCH_PROFILE=1).
 */
export interface SendPathRun {
  measured: Measured;
  metrics: ServiceMetricsSummary;
  stages: StageBreakdown | null;
  statusSplit: Record<string, number>;
  profiles: ProcessProfile[];
  workload: WorkloadFacts;
}

/** What a workload was, and what the guard made of it. */
export interface WorkloadFacts {
  name: SendWorkload;
  instances: number;
  /** Recipients who wrote in first, per instance (conversations). */
  contactsPerInstance: number | null;
  /** Seconds the inbound messages took to be learned and folded. */
  seedS: number | null;
  purpose: string;
  pacing: Record<string, string>;
  /** The guard's first-contact rule on the run's accepted sends (null on a tree without it). */
  judged: { replies: number; firstContacts: number; withoutRule: number } | null;
}

/** The send path of one workload on a stack of this checkout, or of `root` (the commit before a change, for the side-by-side figures). */
export async function runSendPath(config: SendPathConfig, root?: string, profile = false, workload: SendWorkload = 'conversations'): Promise<SendPathRun> {
  return (await runOnStack(config, { root, profile, workloads: [workload] }))[0]!;
}

/**
 * Workloads one after the other on one stack: in a real run one each (their pacing differs), in
 * the smoke both (both at the stack's milliseconds, one stack start fewer). `failures`: a workload
 * whose sends were refused is noted there and the next one runs (else it throws).
 * `profile`: read the services' CPU profiles (BENCH_PROFILE=1).
 */
async function runOnStack(
  config: SendPathConfig,
  options: { root?: string | undefined; profile: boolean; workloads: SendWorkload[]; failures?: string[] },
): Promise<SendPathRun[]> {
  const { root, workloads } = options;
  const paced = workloads.includes('first-contacts') && !config.smoke;
  if (paced && workloads.length > 1) throw new Error('first contacts at the real pacing run on a stack of their own');
  // The guard's facts come from the ingest: only this checkout has them (a tree before the guard sends the same).
  const seeds = workloads.includes('conversations') && !root;
  const services: StackServiceName[] = seeds ? ['api', 'policy', 'delivery', 'instance-events'] : ['api', 'policy', 'delivery'];
  console.log(`bench: ${workloads.join(', ')}: starting the stack (${services.join(', ')}, simulator, fresh database and topics)${root ? ` of ${root}` : ''}`);
  const started = Date.now();
  // The tree's own harness: the commit before a change runs its own stack on its own migrations.
  const { startStack, demoAccount } = await harnessOf(root);
  const stack = await startStack(services, { ...config.stackEnv, ...(paced ? realPacingEnv() : {}) });
  const prefix = stack.isolation.topicPrefix;
  const stop = once(async () => {
    await stack.stop();
    const removed = await deleteKafkaState(baseConfig.kafkaBrokers, [prefix]);
    const subjects = await deleteSubjects(baseConfig.schemaRegistryUrl, prefix);
    console.log(`bench: removed the stack's ${removed.topics} topics, ${removed.groups} consumer groups and ${subjects} registry subjects`);
  });
  defer('stack, its database, topics, groups and subjects', stop);
  const runs: Array<Omit<SendPathRun, 'profiles'> & { window: ReturnType<typeof profileWindow> }> = [];
  try {
    console.log(`bench: stack ready in ${round((Date.now() - started) / 1000, 1)} s at ${stack.apiUrl} (topic prefix ${prefix})`);
    const pacing = Object.fromEntries(PACING_SETTINGS.map((name) => [name, stack.env[name] ?? String(settingsSchema.shape[name].parse(undefined))]));
    for (const workload of workloads) {
      try {
        runs.push(await measureWorkload(config, { stack, demoAccount, workload, seeds: seeds && workload === 'conversations', pacing, tree: root }));
      } catch (error) {
        if (!(error instanceof RefusedSends) || !options.failures) throw error;
        options.failures.push(error.message);
        console.error(`bench: ${error.message}`);
      }
    }
  } finally {
    console.log('bench: stopping the stack');
    await stop();
  }
  // The services have exited: their profiles are written.
  return runs.map(({ window, ...run }) => ({ ...run, profiles: options.profile && run.workload.name === 'conversations' ? window.read() : [] }));
}

/** Accounts made a few at a time (each as the CLI's demo does: a customer, a paired instance, a key). */
async function makeAccounts(count: number, make: () => Promise<DemoAccount>): Promise<DemoAccount[]> {
  const accounts: DemoAccount[] = [];
  while (accounts.length < count) accounts.push(...(await Promise.all(Array.from({ length: Math.min(4, count - accounts.length) }, make))));
  return accounts;
}

async function measureWorkload(
  config: SendPathConfig,
  on: { stack: Stack; demoAccount: Harness['demoAccount']; workload: SendWorkload; seeds: boolean; pacing: Record<string, string>; tree: string | undefined },
): Promise<Omit<SendPathRun, 'profiles'> & { window: ReturnType<typeof profileWindow> }> {
  const { stack, workload, seeds } = on;
  const conversations = workload === 'conversations';
  const profileOf = profileWindow();
  // The gateway is multi-tenant and every plan caps one customer far below this rate, so the
  // load comes from many customers (their limits raised as after a manual review), which also
  // spreads it over the partitions as real traffic would be. First contacts at the real pacing:
  // at least one instance per connection, so each instance has about one send in flight and its
  // lane (one send at a time, typing then a gap) is what the figures show. They are made after
  // instance-events stopped (if it ran): their first connection is never told, so they count as
  // established (the plan's caps; docs/policy.md "The number guard").
  const customers = Math.max(Number(process.env.BENCH_CUSTOMERS ?? 24), conversations || config.smoke ? 0 : config.connections);
  const accounts = await makeAccounts(customers, () => on.demoAccount(stack));
  const contacts = CONTACTS_PER_INSTANCE();
  let seedS: number | null = null;
  if (seeds) {
    console.log(`bench: conversations: ${contacts} people write to each of the ${customers} instances (simulator -> ingest -> instance-events -> ContactLearned)`);
    seedS = (await seedConversations(stack, accounts, contacts)).seconds;
    // Not on the send path: stopped so the measured stack is the one the send path always ran on.
    await stack.kill('instance-events', 'SIGTERM');
    console.log(`bench: conversations: learned and folded in ${seedS} s; instance-events stopped`);
  }
  const account = accounts[0]!;
  const headers = {};
  const instanceOf = (n: number) => accounts[n % accounts.length]!;
  const headersFor = (n: number) => ({ authorization: `Bearer ${instanceOf(n).api_key}` });
  // Conversations: request n replies to person (n / instances) mod contacts of instance n mod
  // instances, so one pair comes round every instances x contacts requests. First contacts: a
  // new person every request (n never repeats within a run).
  const purpose = conversations ? 'authentication' : 'transactional';
  const body = (n: number) => ({
    instance_id: instanceOf(n).instance_id,
    phone: conversations ? conversationPhone(Math.floor(n / accounts.length) % contacts) : `+1416${String(n % 10_000_000).padStart(7, '0')}`,
    message: conversations ? `Your verification code is ${String(n % 1_000_000).padStart(6, '0')}` : `Your order ${n} has shipped.`,
    message_purpose: purpose,
  });
  // One send first: a broken stack fails here with its answer, not as 10 000 non-2xx.
  const probe = await send(stack.apiUrl, account.api_key, { ...body(0), ...(conversations ? {} : { phone: '+14159990000' }) });
  if (probe.status !== 200) throw new Error(`the first send answered ${probe.status}: ${JSON.stringify(probe.body)}`);

  const urls = metricsUrls(stack);
  const topics = new Topics(stack.isolation.topicPrefix, Number(stack.env.TOPIC_PARTITIONS ?? baseConfig.topicPartitions));
  const backlog = backlogPoller(baseConfig.kafkaBrokers, [
    { group: topics.group('policy'), topic: topics.name('customerEvents'), label: 'policy <- customer-events' },
    { group: topics.group('delivery'), topic: topics.name('policyDecisions'), label: 'delivery <- policy-decisions' },
  ]);
  let peakBacklog: Record<string, number> = {};
  let before: Record<ServiceName, Sample[]> | undefined;
  let window = { from: 0, to: 0 };
  const measured = await measure(
    { name: `send path (${workload})`, url: stack.apiUrl, path: '/api/send-message', headers, headersFor, body, classify: answerOf },
    conversations ? config : pacedConfig(config),
    {
      start: async () => {
        before = await scrapeAll(urls);
        await backlog.start();
        window = { from: Date.now(), to: 0 };
        profileOf.start();
      },
      stop: async () => {
        window.to = Date.now();
        profileOf.stop();
        peakBacklog = await backlog.stop();
      },
    },
  );
  const statusSplit = { ...measured.load.classes };
  assertAccepted(`send path (${workload})`, measured.load);
  // Let the last requests' work finish before reading the end state.
  await new Promise((r) => setTimeout(r, 1500));
  const after = await scrapeAll(urls);
  const b = before ?? { api: [], policy: [], delivery: [] };
  const eventsProcessed: Record<string, number> = {};
  for (const service of ['policy', 'delivery'] as const) {
    for (const s of pick(after[service], 'gateway_events_processed_total')) {
      const prior = pick(b[service], 'gateway_events_processed_total', s.labels)[0]?.value ?? 0;
      eventsProcessed[`${service} ${s.labels.outcome}`] = s.value - prior;
    }
  }
  const eventLoopLagP99Ms: Record<string, number> = {};
  const serviceCpuS: Record<string, number> = {};
  for (const service of ['api', 'policy', 'delivery'] as const) {
    eventLoopLagP99Ms[service] = round(sum(after[service], 'nodejs_eventloop_lag_p99_seconds') * 1000, 1);
    serviceCpuS[service] = round(sum(after[service], 'process_cpu_seconds_total') - sum(b[service], 'process_cpu_seconds_total'), 1);
  }
  const metrics: ServiceMetricsSummary = {
    http: histogramDelta(b.api, after.api, 'gateway_http_request_duration_seconds', { route: '/api/send-message', status_code: '200' }),
    eventsProcessed,
    peakBacklog,
    eventLoopLagP99Ms,
    serviceCpuS,
  };
  // The stage breakdown is printed for the conversations workload (the gateway's own speed) only.
  let stages: StageBreakdown | null = null;
  if (conversations) {
    try {
      stages = await stageBreakdown({ brokers: baseConfig.kafkaBrokers, topics, logger: benchLogger('bench-stages'), window });
    } catch (error) {
      console.error(`bench: stage breakdown unavailable: ${String(error)}`);
    }
  }
  const judged = on.tree ? null : await firstContactSplit(stack, accounts.map((a) => a.instance_id));
  if (conversations && judged && judged.firstContacts > 0) {
    throw new RefusedSends(`send path (conversations): ${judged.firstContacts} accepted sends were first contacts: the recipients' messages were not all learned before the load`);
  }
  const facts: WorkloadFacts = { name: workload, instances: accounts.length, contactsPerInstance: conversations ? contacts : null, seedS, purpose, pacing: on.pacing, judged };
  return { measured, metrics, stages, statusSplit, workload: facts, window: profileOf };
}

// ------------------------------------------------------------------------------------- report

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((cell, i) => pad(cell, widths[i]!, i > 0)).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

const fmt = (value: number | null | undefined, digits = 0) => (value === null || value === undefined || Number.isNaN(value) ? '-' : round(value, digits).toString());
const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 2) : null);

export interface SendPathReport {
  at: string;
  config: SendPathConfig;
  host: { cores: number; loadavgBefore: number[]; loadavgAfter: number[] };
  target: typeof TARGET;
  baseline: Measured | null;
  /** The send path's processes and hops with none of the work (runFloor). */
  floor: (Measured & { webhooks: { posted: number; failed: number } }) | null;
  sendPath: Measured | null;
  ratio: { okPerS: number | null; p50: number | null; p99: number | null; floorToTarget: number | null; sendToFloor: number | null };
  verdict: { throughput: 'PASS' | 'MISS' | null; p99: 'PASS' | 'MISS' | null };
  sendStatus: Record<string, number>;
  serviceMetrics: ServiceMetricsSummary | null;
  stages: StageBreakdown | null;
  limits: string[];
  /** CPU per send (ms) by process, the send path beside the floor (from /proc over the measured window). */
  cpuPerSendMs: Array<{ process: string; sendPath: number | null; floor: number | null }>;
  /** The ten heaviest functions of each process in the measured window (BENCH_PROFILE=1). */
  profiles: { sendPath: ProcessProfile[]; floor: ProcessProfile[] };
  /** `sendPath` is the conversations workload; this the first-contacts one (issue 27). */
  firstContacts: (Measured & { statusSplit: Record<string, number>; eventsProcessed: Record<string, number> }) | null;
  workloads: WorkloadFacts[];
  /** What bounds each workload, in words. */
  guardBounds: string[];
  /** Workloads that could not be measured as accepted sends (the run fails). */
  failures: string[];
}

const mean = (a: number, b: number) => (a + b) / 2;

/** What bounds each workload of the number guard, worked out from its pacing and the measured figures. */
function guardBounds(report: SendPathReport): string[] {
  const notes: string[] = [];
  const settings = (env: Record<string, string>, name: keyof typeof settingsSchema.shape) => Number(env[name] ?? settingsSchema.shape[name].parse(undefined));
  const conv = report.workloads.find((w) => w.name === 'conversations');
  const jitter = mean(1, 1 + Number(settingsSchema.shape.DELIVERY_SEND_GAP_JITTER.parse(undefined)));
  if (conv && report.sendPath) {
    const gapS = (jitter * Number(settingsSchema.shape.DELIVERY_SEND_GAP_MS.parse(undefined))) / 1000;
    notes.push(
      `inside conversations: ${conv.instances} instances, ${conv.contactsPerInstance} people each wrote in first (${conv.seedS} s to learn and fold), purpose ${conv.purpose} (no typing), ` +
        `the test stack's ${fmt(settings(conv.pacing, 'DELIVERY_SEND_GAP_MS') * jitter, 1)} ms gap on average between one instance's sends: ` +
        `bound by the gateway's own work (the closed loop and CPU above). At the real gap (${fmt(gapS, 2)} s on average) one instance sends at most ${fmt(1 / gapS, 2)}/s, ` +
        `${conv.instances} instances ${fmt(conv.instances / gapS)}/s.`,
    );
  }
  const fc = report.workloads.find((w) => w.name === 'first-contacts');
  if (fc && report.firstContacts) {
    const env = fc.pacing;
    const chars = 'Your order 10000 has shipped.'.length;
    const typingS = Math.min(Math.max(chars * settings(env, 'DELIVERY_TYPING_MS_PER_CHAR'), settings(env, 'DELIVERY_TYPING_MIN_MS')), settings(env, 'DELIVERY_TYPING_MAX_MS')) / 1000;
    const gapS = (settings(env, 'DELIVERY_SEND_GAP_MS') * jitter) / 1000;
    const { load, eventsProcessed } = report.firstContacts;
    const delivered = eventsProcessed['delivery accepted'] ?? 0;
    const queued = report.firstContacts.statusSplit.queued ?? 0;
    // The demo accounts are on the scale plan (test/support/accounts.ts).
    const caps = DEFAULT_POLICY_CONFIG.guard.firstContacts.scale!;
    notes.push(
      `first contacts: ${fc.instances} instances (established: the plan's ${caps.perHour}/hour and ${caps.perDay}/day each, far above the few sends an instance makes in the run), a new person every send, ` +
        `pacing ${JSON.stringify(env) === JSON.stringify(realPacingEnv()) ? 'at the real defaults' : 'in milliseconds (the test stack\'s)'}: a ${chars}-character text types ${fmt(typingS, 1)} s (±20%), then a ${fmt(gapS, 2)} s gap. ` +
        `One instance sends at most one per ${fmt(typingS + gapS, 1)} s, ${fc.instances} instances ${fmt(fc.instances / (typingS + gapS), 1)}/s; ` +
        `delivery sent ${delivered} in the ${fmt(load.durationS)} s window (${fmt(delivered / load.durationS, 1)}/s). ` +
        `${queued} of ${load.ok} accepted sends answered queued (their turn, typing and call not done by the ${fmt(settings(env, 'SEND_DEADLINE_MS') / 1000)} s deadline), ` +
        `so the answers come at the deadline: ${load.connections} connections / ${fmt(load.latencyMs.mean / 1000, 1)} s allow ${fmt((load.connections * 1000) / load.latencyMs.mean, 1)}/s ` +
        `(autocannon counts no answer still under way when the window closes: about one per connection).`,
    );
  }
  return notes;
}

/** The processes of a send, named alike for the send path and the floor; the rest of the machine last. */
const CPU_ROWS: Array<[string, string, string]> = [
  ['api', 'api service', 'floor api'],
  ['policy', 'policy service', 'floor policy'],
  ['delivery', 'delivery service', 'floor delivery'],
  ['postgres (all backends)', 'postgres (all backends)', 'postgres (all backends)'],
  ['kafka broker', 'kafka broker', 'kafka broker'],
  ['schema registry', 'schema registry', 'schema registry'],
  ['bench process (load, simulator)', BENCH_PROCESS, BENCH_PROCESS],
];

/** % of one core -> ms of CPU per 2xx answer. */
function cpuPerSend(m: Measured | null, label: string | 'other' | 'machine'): number | null {
  if (!m || m.load.okPerS <= 0) return null;
  const pct = label === 'other' ? m.cpu.otherPct : label === 'machine' ? m.cpu.machineBusyPct * m.cpu.cores : (m.cpu.byComponent[label] ?? 0);
  return round((pct * 10) / m.load.okPerS, 2);
}

function cpuPerSendTable(send: Measured | null, floor: Measured | null): SendPathReport['cpuPerSendMs'] {
  return [
    ...CPU_ROWS.map(([process, inSend, inFloor]) => ({ process, sendPath: cpuPerSend(send, inSend), floor: cpuPerSend(floor, inFloor) })),
    { process: 'other processes (not this run)', sendPath: cpuPerSend(send, 'other'), floor: cpuPerSend(floor, 'other') },
    { process: 'machine, all cores', sendPath: cpuPerSend(send, 'machine'), floor: cpuPerSend(floor, 'machine') },
  ];
}

function whatLimits(report: SendPathReport): string[] {
  const notes: string[] = [];
  const cpuMsPer = (m: Measured) => (m.load.okPerS > 0 ? (m.cpu.machineBusyPct / 100) * m.cpu.cores * 1000 / m.load.okPerS : null);
  if (report.floor) {
    const f = report.floor;
    notes.push(
      `floor: ${fmt(f.load.okPerS)} sends/s (p99 ${fmt(f.load.latencyMs.p99)} ms) with the machine ${f.cpu.machineBusyPct}% busy: ${fmt(cpuMsPer(f), 1)} ms of CPU per send for the hops alone ` +
        `(${TARGET.sendsPerS}/s on ${f.cpu.cores} cores allows ${fmt((f.cpu.cores * 1000) / TARGET.sendsPerS, 1)} ms in all).` +
        (report.sendPath ? ` The send path: ${fmt(cpuMsPer(report.sendPath), 1)} ms per send.` : ''),
    );
  }
  const send = report.sendPath;
  if (!send) return notes;
  const { load, cpu } = send;
  if (load.latencyMs.mean > 0) {
    const closedLoop = (load.connections / load.latencyMs.mean) * 1000;
    notes.push(
      `closed loop: ${load.connections} connections / mean latency ${fmt(load.latencyMs.mean, 1)} ms allows at most ${fmt(closedLoop)} req/s; measured ${fmt(load.okPerS)}/s. ` +
        'Throughput here is latency x concurrency unless the machine is saturated.',
    );
  }
  const busy = cpu.machineBusyPct;
  const top = Object.entries(cpu.byComponent).slice(0, 3).map(([k, v]) => `${k} ${v}%`).join(', ');
  notes.push(`CPU: machine ${busy}% busy over ${cpu.cores} cores (${busy >= 85 ? 'saturated: CPU-bound' : 'not saturated'}); top: ${top}.`);
  const lag = Object.entries(report.serviceMetrics?.peakBacklog ?? {}).sort((a, b) => b[1] - a[1])[0];
  if (lag && lag[1] > report.config.connections / 4) {
    notes.push(`queueing: peak backlog ${lag[1]} records at "${lag[0]}": sends wait there for the stage's previous batch (one batch at a time per partition; one customer = one partition).`);
  } else if (lag) {
    notes.push(`queueing: backlog stayed low (peak ${lag[1]} at "${lag[0]}"): time is spent in round trips, not queues.`);
  }
  const st = report.stages;
  if (st?.apiToPolicy && st.policyToDelivery) {
    const rest = load.latencyMs.mean - st.apiToPolicy.meanMs - st.policyToDelivery.meanMs;
    notes.push(
      `mean per send: API append -> policy decision appended ${fmt(st.apiToPolicy.meanMs, 1)} ms, decision -> delivery outcome appended ${fmt(st.policyToDelivery.meanMs, 1)} ms, ` +
        `rest (auth/lookup, produce ack, delivery commit, reply fetch, HTTP) ${fmt(rest, 1)} ms.`,
    );
  }
  if (cpu.otherPct > 20) notes.push(`noise: ${cpu.otherPct}% of a core went to processes outside this run (other workloads on the machine); figures are pessimistic.`);
  return notes;
}

function print(report: SendPathReport): void {
  const b = report.baseline?.load;
  const f = report.floor?.load;
  const s = report.sendPath?.load;
  const row = (label: string, get: (r: LoadResult) => number, digits = 0): string[] => [
    label,
    b ? fmt(get(b), digits) : '-',
    f ? fmt(get(f), digits) : '-',
    s ? fmt(get(s), digits) : '-',
    b && s ? fmt(ratio(get(s), get(b)), 2) : '-',
    f && s ? fmt(ratio(get(s), get(f)), 2) : '-',
  ];
  console.log('');
  console.log(`== send path vs baseline (${report.config.connections} connections, ${report.config.durationS} s after a ${report.config.warmupS} s warm-up)`);
  console.log(
    table([
      ['', 'baseline', 'floor', 'send path', 'send/baseline', 'send/floor'],
      row('requests/s (mean, all statuses)', (r) => r.rpsMean),
      row('2xx/s', (r) => r.okPerS),
      row('latency mean (ms)', (r) => r.latencyMs.mean, 1),
      row('latency p50 (ms)', (r) => r.latencyMs.p50),
      row('latency p90 (ms)', (r) => r.latencyMs.p90),
      row('latency p99 (ms)', (r) => r.latencyMs.p99),
      row('latency max (ms)', (r) => r.latencyMs.max),
      row('requests', (r) => r.requests),
      row('non-2xx', (r) => r.non2xx),
      row('errors (incl. timeouts)', (r) => r.errors),
    ]),
  );
  if (s && Object.keys(report.sendStatus).length > 0) console.log(`send path (inside conversations) answers: ${JSON.stringify(report.sendStatus)}`);
  if (report.floor) {
    const w = report.floor.webhooks;
    console.log(
      `floor: the send path's processes and hops with none of the work (JSON records, no Postgres, registry, auth or rules): ` +
        `HTTP -> api -> requests -> policy stage -> decisions -> delivery stage -> instance sendText -> outcomes -> api reply; ` +
        `the instance posted ${w.posted} webhooks into the api (4 per send), ${w.failed} failed`,
    );
  }
  for (const [name, r] of [['baseline', b], ['floor', f], ['send path', s]] as const) {
    if (r?.sampleFailures.length) console.log(`${name} failures, e.g.: ${r.sampleFailures.join(' | ')}`);
  }

  const m = report.serviceMetrics;
  if (m || report.stages || report.sendPath || report.floor) {
    console.log('\n== where the time goes (send path, measured window)');
    if (m) {
      console.log(`API /metrics, POST /api/send-message 200: ${m.http.count} requests, mean ${fmt(m.http.meanMs, 1)} ms, p50 <= ${fmt(m.http.p50LeMs)} ms, p99 <= ${fmt(m.http.p99LeMs)} ms (bucket bounds)`);
    }
    const st = report.stages;
    if (st?.apiToPolicy) console.log(`stage API append -> policy decision appended: mean ${fmt(st.apiToPolicy.meanMs, 1)} ms, p50 ${fmt(st.apiToPolicy.p50Ms)} ms, p99 ${fmt(st.apiToPolicy.p99Ms)} ms (${st.apiToPolicy.count} sends)`);
    if (st?.policyToDelivery) console.log(`stage decision -> delivery outcome appended: mean ${fmt(st.policyToDelivery.meanMs, 1)} ms, p50 ${fmt(st.policyToDelivery.p50Ms)} ms, p99 ${fmt(st.policyToDelivery.p99Ms)} ms`);
    if (m) {
      console.log(`peak backlog during the run (high watermark - committed offset, all partitions): ${JSON.stringify(m.peakBacklog)}`);
      console.log(`events processed in the window: ${JSON.stringify(m.eventsProcessed)}`);
      console.log(`event-loop lag p99 (ms) at the end: ${JSON.stringify(m.eventLoopLagP99Ms)}; service CPU seconds in the window: ${JSON.stringify(m.serviceCpuS)}`);
    }
    for (const [name, r] of [['baseline', report.baseline], ['floor', report.floor], ['send path', report.sendPath]] as const) {
      if (r) console.log(`CPU during ${name} (% of one core): ${JSON.stringify(r.cpu.byComponent)}; other processes ${r.cpu.otherPct}%; machine ${r.cpu.machineBusyPct}% busy of ${r.cpu.cores} cores`);
    }
    for (const note of report.limits) console.log(`- ${note}`);
  }

  console.log('');
  const parts: string[] = [];
  if (s) parts.push(`send path: ${fmt(s.okPerS)} sends/s, p50 ${fmt(s.latencyMs.p50)} ms, p99 ${fmt(s.latencyMs.p99)} ms`);
  if (b) parts.push(`baseline: ${fmt(b.okPerS)} req/s, p50 ${fmt(b.latencyMs.p50)} ms, p99 ${fmt(b.latencyMs.p99)} ms`);
  if (f) parts.push(`floor: ${fmt(f.okPerS)} sends/s, p50 ${fmt(f.latencyMs.p50)} ms, p99 ${fmt(f.latencyMs.p99)} ms`);
  if (s && b) parts.push(`ratio (send/baseline): ${fmt(report.ratio.okPerS, 2)}`);
  console.log(parts.join('; '));
  if (s) {
    console.log(
      `target >= ${TARGET.sendsPerS} sends/s: ${report.verdict.throughput} (${fmt(s.okPerS)}); target p99 < ${TARGET.p99Ms} ms: ${report.verdict.p99} (${fmt(s.latencyMs.p99)} ms)`,
    );
  }
  if (report.sendPath || report.floor) {
    console.log('\n== CPU per send by process (ms of CPU per 2xx, measured window, from /proc)');
    console.log(
      table([
        ['process', 'send path', 'floor', 'send/floor'],
        ...report.cpuPerSendMs.map((r) => [r.process, fmt(r.sendPath, 2), fmt(r.floor, 2), r.sendPath !== null && r.floor ? fmt(ratio(r.sendPath, r.floor), 1) : '-']),
      ]),
    );
  }
  const sends = (m: Measured | null) => (m ? m.load.ok : 0);
  if (report.profiles.sendPath.length > 0) console.log(`\n${formatProfiles('send path', report.profiles.sendPath, sends(report.sendPath))}`);
  if (report.profiles.floor.length > 0) console.log(`\n${formatProfiles('floor', report.profiles.floor, sends(report.floor))}`);
  if (PROFILING) console.log(`profiles written under ${PROFILE_DIR}`);
  printGuard(report);
  console.log(`figures written to ${OUTPUT}`);
}

/** The send path with the number guard (issue 27): both workloads beside the floor. */
function printGuard(report: SendPathReport): void {
  const f = report.floor?.load;
  const c = report.sendPath?.load;
  const fc = report.firstContacts;
  if (!c && !fc) return;
  const col = (r: LoadResult | undefined, get: (r: LoadResult) => number, digits = 0) => (r ? fmt(get(r), digits) : '-');
  const word = (r: LoadResult | undefined, w: string) => (r ? String(r.classes[w] ?? 0) : '-');
  const row = (label: string, get: (r: LoadResult) => number, digits = 0) => [label, col(f, get, digits), col(c, get, digits), col(fc?.load, get, digits)];
  console.log(`\n== send path with the number guard (issue 27), ${report.config.connections} connections`);
  console.log(
    table([
      ['', 'floor', 'inside conversations', 'first contacts'],
      row('accepted sends/s (2xx)', (r) => r.okPerS, 1),
      row('latency p50 (ms)', (r) => r.latencyMs.p50),
      row('latency p99 (ms)', (r) => r.latencyMs.p99),
      row('measured s', (r) => r.durationS),
      ['answered sent', '-', word(c, 'sent'), word(fc?.load, 'sent')],
      ['answered queued', '-', word(c, 'queued'), word(fc?.load, 'queued')],
      row('not accepted (non-2xx, errors)', (r) => r.non2xx + r.errors),
    ]),
  );
  for (const w of report.workloads) {
    if (w.judged) console.log(`${w.name}: the guard judged the run's accepted sends: ${w.judged.replies} replies, ${w.judged.firstContacts} first contacts`);
  }
  if (fc) console.log(`first contacts: delivery's events in the window: ${JSON.stringify(fc.eventsProcessed)}`);
  for (const note of report.guardBounds) console.log(`- ${note}`);
  for (const failure of report.failures) console.log(`FAILED: ${failure}`);
}

export async function sendPathBench(config: SendPathConfig): Promise<SendPathReport> {
  const loadavgBefore = loadavg().map((v) => round(v, 2));
  // A workload whose sends were refused is reported and the next one runs; the run fails at the end.
  const failures: string[] = [];
  const on = (workloads: SendWorkload[]) => runOnStack(config, { profile: PROFILING, workloads, failures });
  const sendsToo = config.only !== 'baseline' && config.only !== 'floor';
  // The smoke runs both workloads on one stack (both at milliseconds), started beside the baseline
  // and the floor (its figures mean nothing; its time is make test's). A real run measures one
  // thing at a time and gives first contacts a stack of their own at the real pacing.
  const smokeRuns = sendsToo && config.smoke ? on(['conversations', 'first-contacts']) : null;
  smokeRuns?.catch(() => undefined); // awaited below; a failure meanwhile is not unhandled
  const baseline = config.only === 'send' || config.only === 'floor' ? null : await runBaseline(config);
  const floor = config.only === 'send' || config.only === 'baseline' ? null : await runFloor(config);
  const runs = !sendsToo ? [] : smokeRuns ? await smokeRuns : [...(await on(['conversations'])), ...(await on(['first-contacts']))];
  const send = runs.find((r) => r.workload.name === 'conversations') ?? null;
  const first = runs.find((r) => r.workload.name === 'first-contacts') ?? null;
  const sendLoad = send?.measured.load;
  const report: SendPathReport = {
    at: new Date().toISOString(),
    config,
    host: { cores: cpuSnapshot().cores, loadavgBefore, loadavgAfter: loadavg().map((v) => round(v, 2)) },
    target: TARGET,
    baseline,
    floor: floor && { load: floor.load, cpu: floor.cpu, webhooks: floor.webhooks },
    sendPath: send?.measured ?? null,
    ratio: {
      okPerS: sendLoad && baseline ? ratio(sendLoad.okPerS, baseline.load.okPerS) : null,
      p50: sendLoad && baseline ? ratio(sendLoad.latencyMs.p50, baseline.load.latencyMs.p50) : null,
      p99: sendLoad && baseline ? ratio(sendLoad.latencyMs.p99, baseline.load.latencyMs.p99) : null,
      floorToTarget: floor ? ratio(floor.load.okPerS, TARGET.sendsPerS) : null,
      sendToFloor: sendLoad && floor ? ratio(sendLoad.okPerS, floor.load.okPerS) : null,
    },
    verdict: {
      throughput: sendLoad ? (sendLoad.okPerS >= TARGET.sendsPerS ? 'PASS' : 'MISS') : null,
      p99: sendLoad ? (sendLoad.latencyMs.p99 < TARGET.p99Ms && sendLoad.ok > 0 ? 'PASS' : 'MISS') : null,
    },
    sendStatus: send?.statusSplit ?? {},
    serviceMetrics: send?.metrics ?? null,
    stages: send?.stages ?? null,
    cpuPerSendMs: cpuPerSendTable(send?.measured ?? null, floor),
    profiles: { sendPath: send?.profiles ?? [], floor: floor?.profiles ?? [] },
    firstContacts: first ? { ...first.measured, statusSplit: first.statusSplit, eventsProcessed: first.metrics.eventsProcessed } : null,
    workloads: [send, first].flatMap((run) => (run ? [run.workload] : [])),
    guardBounds: [],
    failures,
    limits: [],
  };
  report.limits = whatLimits(report);
  report.guardBounds = guardBounds(report);
  mkdirSync(`${ROOT}.run/bench`, { recursive: true });
  writeFileSync(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
  print(report);
  if (failures.length > 0) throw new RefusedSends(`the send path measured refusals, not sends:\n  ${failures.join('\n  ')}`);
  return report;
}
