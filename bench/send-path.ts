// The send-path benchmark: POST /api/send-message on the real stack (API, policy and delivery
// processes, Kafka, registry, Postgres, simulator) against a baseline measured in the same run, a
// bare fastify route doing one Kafka produce + consume round trip. Reports; never gates.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Topics } from '@gw/events';
import { demoAccount, type DemoAccount } from '../test/support/accounts.ts';
import { baseConfig, uniqueSuffix } from '../test/support/infra.ts';
import { send } from '../test/support/http.ts';
import { startStack, type ServiceName, type Stack } from '../test/support/stack.ts';
import { backlogPoller } from './lib/backlog.ts';
import { startBaseline } from './lib/baseline.ts';
import { startFloor } from './lib/floor.ts';
import { benchLogger } from './lib/logger.ts';
import { cpuSnapshot, cpuUsage, type CpuUsage } from './lib/cpu.ts';
import { runLoad, type LoadOptions, type LoadResult, type LoadTarget } from './lib/load.ts';
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
  only?: 'baseline' | 'floor' | 'send' | 'compare' | 'pbx' | 'webhooks';
}

interface Measured {
  load: LoadResult;
  cpu: CpuUsage;
}

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
  console.log(`bench: ${target.name}: warm-up ${config.warmupS} s, ${config.connections} connections`);
  const warm = await runLoad(target, { ...base, durationS: config.warmupS });
  console.log(`bench: ${target.name}: warm-up done (${warm.ok}/${warm.requests} 2xx); measuring ${config.durationS} s`);
  if (warm.ok === 0) throw new Error(`${target.name}: no 2xx during warm-up; e.g. ${warm.sampleFailures[0] ?? `${warm.errors} errors`}`);
  await new Promise((r) => setTimeout(r, 1000)); // let the warm-up's in-flight requests drain
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
async function runFloor(config: SendPathConfig): Promise<Measured & { webhooks: { posted: number; failed: number } }> {
  const prefix = `bench.${uniqueSuffix()}.`;
  const brokers = baseConfig.kafkaBrokers;
  const floor = await startFloor({ brokers, logger: benchLogger('bench-floor'), prefix, partitions: 6 });
  const stop = once(async () => {
    await floor.stop();
    await deleteKafkaState(brokers, [prefix]);
  });
  defer('floor processes, topics and groups', stop);
  console.log(`bench: floor (the send path's processes and hops, no work) listening on ${floor.url}`);
  try {
    const customers = Number(process.env.BENCH_CUSTOMERS ?? 24);
    const measured = await measure(
      { name: 'floor', url: floor.url, path: '/send', headers: {}, body: (n) => ({ customer: `c${n % customers}`, phone: `+1415555${String(n % 10_000).padStart(4, '0')}`, message: `bench message ${n}` }) },
      config,
    );
    return { ...measured, webhooks: floor.webhooks() };
  } finally {
    await stop();
  }
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
export async function runSendPath(config: SendPathConfig, root?: string): Promise<{ measured: Measured; metrics: ServiceMetricsSummary; stages: StageBreakdown | null; statusSplit: Record<string, number> }> {
  console.log(`bench: starting the stack (api, policy, delivery, simulator, fresh database and topics)${root ? ` of ${root}` : ''}`);
  const started = Date.now();
  const stack = await startStack(['api', 'policy', 'delivery'], config.stackEnv, { root });
  const prefix = stack.isolation.topicPrefix;
  const stop = once(async () => {
    await stack.stop();
    const removed = await deleteKafkaState(baseConfig.kafkaBrokers, [prefix]);
    const subjects = await deleteSubjects(baseConfig.schemaRegistryUrl, prefix);
    console.log(`bench: removed the stack's ${removed.topics} topics, ${removed.groups} consumer groups and ${subjects} registry subjects`);
  });
  defer('stack, its database, topics, groups and subjects', stop);
  try {
    console.log(`bench: stack ready in ${round((Date.now() - started) / 1000, 1)} s at ${stack.apiUrl} (topic prefix ${prefix})`);
    // The gateway is multi-tenant and every plan caps one customer far below this rate, so the
    // load comes from many customers (their limits raised as after a manual review), which also
    // spreads it over the partitions as real traffic would be.
    const customers = Number(process.env.BENCH_CUSTOMERS ?? 24);
    const accounts: DemoAccount[] = [];
    for (let i = 0; i < customers; i++) accounts.push(await demoAccount(stack));
    const account = accounts[0]!;
    const headers = {};
    const headersFor = (n: number) => ({ authorization: `Bearer ${accounts[n % accounts.length]!.api_key}` });
    const body = (n: number) => ({
      instance_id: accounts[n % accounts.length]!.instance_id,
      phone: `+1415555${String(n % 10_000).padStart(4, '0')}`,
      message: `bench message ${n}`,
      message_purpose: 'transactional',
    });
    // One send first: a broken stack fails here with its answer, not as 10 000 non-2xx.
    const probe = await send(stack.apiUrl, account.api_key, { ...body(0), message: "bench probe" });
    if (probe.status !== 200) throw new Error(`the first send answered ${probe.status}: ${JSON.stringify(probe.body)}`);

    const urls = metricsUrls(stack);
    const topics = new Topics(prefix, Number(stack.env.TOPIC_PARTITIONS ?? baseConfig.topicPartitions));
    const backlog = backlogPoller(baseConfig.kafkaBrokers, [
      { group: topics.group('policy'), topic: topics.name('customerEvents'), label: 'policy <- customer-events' },
      { group: topics.group('delivery'), topic: topics.name('policyDecisions'), label: 'delivery <- policy-decisions' },
    ]);
    let peakBacklog: Record<string, number> = {};
    let before: Record<ServiceName, Sample[]> | undefined;
    let window = { from: 0, to: 0 };
    const statusSplit: Record<string, number> = {};
    const measured = await measure(
      {
        name: 'send path',
        url: stack.apiUrl,
        path: '/api/send-message',
        headers,
        headersFor,
        body,
        classify: (_status, text) => {
          try {
            return String((JSON.parse(text) as { status?: unknown }).status ?? 'unknown');
          } catch {
            return 'unparsable';
          }
        },
      },
      config,
      {
        start: async () => {
          before = await scrapeAll(urls);
          await backlog.start();
          window = { from: Date.now(), to: 0 };
        },
        stop: async () => {
          window.to = Date.now();
          peakBacklog = await backlog.stop();
        },
      },
    );
    Object.assign(statusSplit, measured.load.classes);
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
    let stages: StageBreakdown | null = null;
    try {
      stages = await stageBreakdown({
        brokers: baseConfig.kafkaBrokers,
        topics,
        logger: benchLogger('bench-stages'),
        window,
      });
    } catch (error) {
      console.error(`bench: stage breakdown unavailable: ${String(error)}`);
    }
    return { measured, metrics, stages, statusSplit };
  } finally {
    console.log('bench: stopping the stack');
    await stop();
  }
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
  if (s && Object.keys(report.sendStatus).length > 0) console.log(`send path 2xx by status: ${JSON.stringify(report.sendStatus)}`);
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
  console.log(`figures written to ${OUTPUT}`);
}

export async function sendPathBench(config: SendPathConfig): Promise<SendPathReport> {
  const loadavgBefore = loadavg().map((v) => round(v, 2));
  const baseline = config.only === 'send' || config.only === 'floor' ? null : await runBaseline(config);
  const floor = config.only === 'send' || config.only === 'baseline' ? null : await runFloor(config);
  const send = config.only === 'baseline' || config.only === 'floor' ? null : await runSendPath(config);
  const sendLoad = send?.measured.load;
  const report: SendPathReport = {
    at: new Date().toISOString(),
    config,
    host: { cores: cpuSnapshot().cores, loadavgBefore, loadavgAfter: loadavg().map((v) => round(v, 2)) },
    target: TARGET,
    baseline,
    floor,
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
    limits: [],
  };
  report.limits = whatLimits(report);
  mkdirSync(`${ROOT}.run/bench`, { recursive: true });
  writeFileSync(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
  print(report);
  return report;
}
