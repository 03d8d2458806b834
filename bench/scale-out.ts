// What a second process per stage buys (docs/scaling.md): the same load on the same Kafka (the
// three-node cluster under `make cluster-bench`), first with one process of the API and of every
// stage, then with two; the one-process run is the baseline of the two-process one. Figures: sends
// answered per second and their latency, message.sent webhooks posted per second, and the CPU
// each service spent per thousand sends (what sizes a larger machine). Reports; never gates.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gatewayctl } from '../test/support/cli.ts';
import { demoAccount, type DemoAccount } from '../test/support/accounts.ts';
import { baseConfig } from '../test/support/infra.ts';
import { startStack, type Stack, type StackServiceName } from '../test/support/stack.ts';
import { startWebhookReceiver } from '../services/instance-simulator/src/testing/webhook-receiver.ts';
import { cpuSnapshot, cpuUsage } from './lib/cpu.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { scrape, sum } from './lib/prom.ts';
import { deleteKafkaState, deleteSubjects } from './lib/teardown.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUTPUT = `${ROOT}.run/bench/scale-out.json`;
const SERVICES: StackServiceName[] = ['api', 'policy', 'delivery', 'instance-events', 'webhooks'];
const DURATION_S = Number(process.env.SCALE_DURATION_S ?? 30);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 32);
const CUSTOMERS = Number(process.env.SCALE_CUSTOMERS ?? 24);
const ENV = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '200', LOG_LEVEL: 'warn' };

interface Run {
  processes_per_stage: number;
  sends_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  /** message.sent webhooks posted per second, from the first send until the last of them arrived. */
  webhooks_per_s: number;
  webhooks_received: number;
  /** CPU seconds each service's processes spent per 1000 sends answered. */
  cpu_s_per_1000_sends: Record<string, number>;
  /** While the load ran: the machine's busy share, and percent of one core by component (Kafka, Postgres, the load generator...). */
  machine_busy_pct: number;
  cpu_pct_of_one_core: Record<string, number>;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function cpuByService(stack: Stack): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const process of stack.processes) {
    const service = process.split('#')[0]!;
    totals[service] = (totals[service] ?? 0) + sum(await scrape(stack.metricsUrl(process)), 'process_cpu_seconds_total');
  }
  return totals;
}

/** Half the connections on each API process (all on the one when there is one), at the same time. */
async function load(stack: Stack, accounts: DemoAccount[]): Promise<LoadResult[]> {
  const per = Math.max(1, Math.floor(CONNECTIONS / stack.apiUrls.length));
  return Promise.all(stack.apiUrls.map((url, api) => runLoad({
    name: `api ${api}`,
    url,
    path: '/api/send-message',
    headers: {},
    headersFor: (n) => ({ authorization: `Bearer ${accounts[(n * 7 + api) % accounts.length]!.api_key}` }),
    body: (n) => ({
      instance_id: accounts[(n * 7 + api) % accounts.length]!.instance_id,
      phone: `+1415${api}${String(n % 1_000_000).padStart(6, '0')}`,
      message: `scale-out ${api}-${n}: your appointment is confirmed.`,
      message_purpose: 'transactional',
    }),
    classify: (_status, text) => {
      try {
        return String((JSON.parse(text) as { status?: unknown }).status ?? 'unknown');
      } catch {
        return 'unparsable';
      }
    },
  }, { durationS: DURATION_S, connections: per, timeoutS: 20 })));
}

async function measure(replicas: number): Promise<Run> {
  console.log(`scale-out: ${replicas} process(es) per stage: starting the stack`);
  const stack = await startStack(SERVICES, ENV, { replicas });
  const receiver = await startWebhookReceiver();
  try {
    const accounts: DemoAccount[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const account = await demoAccount(stack);
      const set = await gatewayctl(stack.env, '--json', 'webhook', 'set', '--instance', account.instance_id, '--url', `${receiver.url}/hooks`, '--events', 'message.sent');
      if (set.code !== 0) throw new Error(`webhook set failed: ${set.stderr}`);
      accounts.push(account);
    }
    const cpuBefore = await cpuByService(stack);
    const machineBefore = cpuSnapshot();
    const began = Date.now();
    const results = await load(stack, accounts);
    const answered = results.reduce((n, r) => n + r.ok, 0);
    const machine = cpuUsage(machineBefore, cpuSnapshot());
    const cpuAfter = await cpuByService(stack);
    // The webhooks of every sent message, however long after the load they are posted.
    const sentAnswers = results.reduce((n, r) => n + (r.classes.sent ?? 0), 0);
    const deadline = Date.now() + 120_000;
    const sentHooks = () => receiver.received.filter((r) => r.body.event === 'message.sent').length;
    while (sentHooks() < sentAnswers && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const lastHook = receiver.received.reduce((last, r) => Math.max(last, r.at), began + 1);
    const all = results;
    const weighted = (pick: (r: LoadResult) => number) => all.reduce((n, r) => n + pick(r) * r.ok, 0) / Math.max(1, answered);
    return {
      processes_per_stage: replicas,
      sends_per_s: round(results.reduce((n, r) => n + r.okPerS, 0)),
      // Per API process percentiles, weighted by its answers (both see the same mix).
      p50_ms: round(weighted((r) => r.latencyMs.p50)),
      p99_ms: round(Math.max(...all.map((r) => r.latencyMs.p99))),
      non_2xx: all.reduce((n, r) => n + r.non2xx, 0),
      errors: all.reduce((n, r) => n + r.errors + r.timeouts, 0),
      webhooks_per_s: round(sentHooks() / ((lastHook - began) / 1000)),
      webhooks_received: sentHooks(),
      machine_busy_pct: machine.machineBusyPct,
      cpu_pct_of_one_core: machine.byComponent,
      cpu_s_per_1000_sends: Object.fromEntries(Object.keys(cpuAfter).map((s) => [s, round(((cpuAfter[s]! - (cpuBefore[s] ?? 0)) / Math.max(1, answered)) * 1000, 2)])),
    };
  } finally {
    await receiver.close();
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [stack.isolation.topicPrefix]).catch(() => undefined);
    await deleteSubjects(baseConfig.schemaRegistryUrl, stack.isolation.topicPrefix).catch(() => undefined);
  }
}

const one = await measure(1);
const two = await measure(2);
const report = { brokers: baseConfig.kafkaBrokers, duration_s: DURATION_S, connections: CONNECTIONS, customers: CUSTOMERS, runs: [one, two], ratio_two_to_one: { sends_per_s: round(two.sends_per_s / one.sends_per_s, 2), webhooks_per_s: round(two.webhooks_per_s / one.webhooks_per_s, 2) } };
mkdirSync(`${ROOT}.run/bench`, { recursive: true });
writeFileSync(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
const row = (r: Run) => `  ${String(r.processes_per_stage).padEnd(20)} ${String(r.sends_per_s).padStart(9)} ${String(r.p50_ms).padStart(8)} ${String(r.p99_ms).padStart(8)} ${String(r.webhooks_per_s).padStart(12)}   ${Object.entries(r.cpu_s_per_1000_sends).map(([s, v]) => `${s} ${v}`).join(', ')}`;
console.log(`\nscale-out on ${baseConfig.kafkaBrokers.length} broker(s), ${DURATION_S} s at ${CONNECTIONS} connections, ${CUSTOMERS} customers:`);
console.log('  processes per stage   sends/s   p50 ms   p99 ms   webhooks/s   CPU s per 1000 sends');
console.log(row(one));
console.log(row(two));
for (const r of [one, two]) console.log(`  ${r.processes_per_stage} per stage: machine ${r.machine_busy_pct}% busy; % of one core: ${Object.entries(r.cpu_pct_of_one_core).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`  two / one: sends ${report.ratio_two_to_one.sends_per_s}x, webhooks ${report.ratio_two_to_one.webhooks_per_s}x (written to ${OUTPUT})`);
