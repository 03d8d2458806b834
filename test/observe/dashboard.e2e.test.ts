import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { EVENT_TYPE_HEADER, EventCodec, Topics } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { freePort } from '../support/ports.ts';
import { until, useStack } from '../support/suite.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';
import { dashboardQueries, ROOT } from './observe-files.ts';

// Every panel of the Grafana dashboard against a real Prometheus (Debian's, started by
// scripts/observe.sh with deploy/observe's config and rules) scraping a real stack: after sends,
// a webhook endpoint that answers and one that refuses, and a record dead-lettered, every query
// of every panel returns data.
// Two seconds: a short interval, with room for a scrape of a busy process on a loaded machine
// (a scrape may take up to the interval; the panels' rate windows are four intervals).
const SCRAPE_SECONDS = 2;
const ENV = {
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_DELAYS_MS: '0,500,1000',
  WEBHOOK_RETRY_JITTER: '0',
  STAGE_RECORD_TRIES: '1',
  LAG_POLL_MS: '1000',
  POLICY_CHAIN_VERIFY_EVERY_MS: '1000',
  DEAD_LETTERS_COUNT_EVERY_MS: '1000',
};
const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'], env: ENV });
const run = promisify(execFile);

let observeDir: string;
let prometheusUrl: string;
let observeEnv: Record<string, string>;
let receiver: WebhookReceiver;
const started = Date.now() / 1000;

/** scripts/observe.sh as `make observe` runs it, with its own directory and port, scraping this stack's processes. */
const observe = (command: string) => run('bash', [`${ROOT}scripts/observe.sh`, command], { cwd: ROOT, env: { ...process.env, ...observeEnv }, timeout: 90_000 });

beforeAll(async () => {
  observeDir = mkdtempSync(`${tmpdir()}/gw-observe-`);
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  observeEnv = { OBSERVE_DIR: observeDir, OBSERVE_PORT: String(port), OBSERVE_SCRAPE_INTERVAL: `${SCRAPE_SECONDS}s`, OBSERVE_LOCAL_TARGETS: '0', OBSERVE_STOP_WITH_PID: String(process.pid) };
  // A target file as deploy/observe/README.md describes it: one entry per process.
  const targets = suite.stack.processes.map((process) => ({
    targets: [new URL(suite.stack.metricsUrl(process)).host],
    labels: { service: process.split('#')[0]!, process: process.replace('#', '-') },
  }));
  mkdirSync(`${observeDir}/targets`, { recursive: true });
  writeFileSync(`${observeDir}/targets/stack.json`, JSON.stringify(targets));
  const { stdout } = await observe('start');
  expect(stdout).toContain('prometheus: ready');
  receiver = await startWebhookReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  if (observeEnv) await observe('stop');
  if (observeDir) rmSync(observeDir, { recursive: true, force: true });
});

async function cli(...args: string[]) {
  const out = await gatewayctl({ ...suite.stack.env, ...ENV }, '--json', ...args);
  expect(out.code, out.stdout + out.stderr).toBe(0);
  return JSON.parse(out.stdout.trim().split('\n').pop() || 'null');
}

/** A range query over the test's time, as a panel showing the last minutes asks it. */
async function queryRange(expr: string): Promise<Array<{ metric: Record<string, string>; values: Array<[number, string]> }>> {
  const params = new URLSearchParams({ query: expr, start: String(started), end: String(Date.now() / 1000), step: `${SCRAPE_SECONDS}s` });
  const response = await fetch(`${prometheusUrl}/api/v1/query_range?${params}`);
  const body = (await response.json()) as { status: string; error?: string; data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> } };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result;
}

const hasNumbers = (result: Awaited<ReturnType<typeof queryRange>>) => result.some((series) => series.values.some(([, v]) => Number.isFinite(Number(v))));

/** Appends a record no stage can decode to gateway-events: the webhook-enqueue stage dead-letters it. */
async function poisonGatewayEvents(customerId: string) {
  const config = loadConfig(suite.stack.env);
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init(['GatewayEventEmitted']);
  const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'observe-poison', logger: createLogger('observe-poison', 'error') });
  try {
    const value = Buffer.concat([Buffer.from([0]), Buffer.from([0, 0, 0, codec.schemaId('GatewayEventEmitted')]), Buffer.from([0x99])]);
    await kafka.send([{ topic: topics.name('gatewayEvents'), key: customerId, value, headers: { [EVENT_TYPE_HEADER]: 'GatewayEventEmitted', 'correlation-id': 'observe-poison' } }]);
  } finally {
    await kafka.close();
  }
}

const sendOne = (account: DemoAccount, n: number) =>
  send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: `+1415555${String(3000 + n).padStart(4, '0')}`, message: `observe ${n}`, message_purpose: 'support' });

describe('the Grafana dashboard', () => {
  it('every query of every panel returns data from Prometheus scraping the running stack', async () => {
    // Webhooks: one endpoint that answers, one whose port refuses connections.
    const answering = await demoAccount(suite.stack);
    const refusing = await demoAccount(suite.stack);
    await cli('webhook', 'set', '--instance', answering.instance_id, '--url', `${receiver.url}/hooks`, '--events', 'message.sent');
    await cli('webhook', 'set', '--instance', refusing.instance_id, '--url', `http://127.0.0.1:${await freePort()}/hooks`, '--events', 'message.sent');
    const sendRound = async (from: number, to: number) => {
      for (let n = from; n < to; n++) {
        for (const account of [answering, refusing]) {
          const answer = await sendOne(account, n);
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        }
      }
    };
    // Two rounds, a scrape between them: the latency histogram's series (made by the first send)
    // is seen before the second round moves it, so its rate, and the quantiles, are not all zero.
    await sendRound(0, 3);
    await until(async () => (await queryRange(`sum(gateway_http_request_duration_seconds_count{route="/api/send-message"})`)).length > 0, 30_000, 'the first sends scraped');
    await sendRound(3, 6);
    await poisonGatewayEvents(answering.customer_id);
    await until(async () => receiver.accepted().length >= 5, 30_000, 'the answering endpoint got its webhooks');

    const queries = dashboardQueries(SCRAPE_SECONDS);
    expect(queries.length).toBeGreaterThanOrEqual(15);
    const empty = new Set(queries.map((q) => q.expr));
    // Each query is asked until it has data (Prometheus scrapes every SCRAPE_SECONDS and evaluates the
    // recording rules as often); the ones still empty at the deadline are named.
    await until(
      async () => {
        for (const expr of [...empty]) if (hasNumbers(await queryRange(expr))) empty.delete(expr);
        return empty.size === 0;
      },
      90_000,
      'every dashboard query to return data',
    ).catch((error) => {
      const missing = queries.filter((q) => empty.has(q.expr)).map((q) => `${q.panel} (${q.refId}): ${q.expr}`);
      throw new Error(`${(error as Error).message}; no data for:\n${missing.join('\n')}`);
    });

    // And the series say what happened: a letter open on webhook-enqueue, both kinds of webhook
    // attempts, a failing endpoint, intact chains, a breaker per manager used (closed).
    const last = async (expr: string): Promise<Array<Record<string, string | number>>> => (await queryRange(expr)).map((s) => ({ ...s.metric, value: Number(s.values.at(-1)![1]) }));
    await until(async () => (await last('max by (stage) (gateway_dead_letters_open)')).some((s) => s.stage === 'webhook-enqueue' && s.value === 1), 30_000, 'the open dead letter counted');
    expect((await last('sum by (result) (gateway_webhook_attempts_total)')).map((s) => s.result).sort()).toEqual(['delivered', 'network_error']);
    expect(await last('max by (state) (gateway_webhook_endpoints)')).toEqual(expect.arrayContaining([expect.objectContaining({ state: 'healthy', value: 1 }), expect.objectContaining({ state: 'failing', value: 1 })]));
    expect(await last('min(gateway_policy_chain_verify_ok)')).toEqual([{ value: 1 }]);
    expect(await last('sum by (state) (gateway_circuit_breakers)')).toEqual(expect.arrayContaining([expect.objectContaining({ state: 'closed', value: 1 })]));
    // Every process answered its scrapes.
    expect((await last('up{job="gateway"}')).map((s) => s.value)).toEqual(suite.stack.processes.map(() => 1));
  });
});
