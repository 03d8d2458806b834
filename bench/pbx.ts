// The PBX benchmark, two kinds of signed PBX events measured apart on one real stack:
// - record-only events (`test` and `inbound_reply`: they send nothing, the API appends them as
//   PbxEventReceived and answers), beside a bare fastify route doing the same HMAC check;
// - sending events (`outbound_message` replying inside a conversation the recipient started),
//   beside POST /api/send-message on the same stack with the same workload: a sending event is
//   the send path plus the PBX's checks, so the send path bounds it.
// Each measured after a warm-up; every answer must be an accepted one (else the run measured
// refusals and fails). Under BENCH_PROFILE=1 the services' ten heaviest functions per kind.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { SecretBox } from '@gw/security';
import { createPbx } from '@gw/accounts';
import { demoAccount, withOperator, type DemoAccount } from '../test/support/accounts.ts';
import { startStack, type Stack } from '../test/support/stack.ts';
import { conversationPhone, seedConversations } from './lib/conversations.ts';
import { runLoad, type LoadResult, type LoadTarget } from './lib/load.ts';
import { formatProfiles, profileWindow, type ProcessProfile } from './lib/profile.ts';
import { cpuSnapshot, cpuUsage, type CpuUsage } from './lib/cpu.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';
import { baseConfig } from '../test/support/infra.ts';

const sign = (secret: string, timestamp: string, raw: string) => createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex');

interface Signer {
  integrationId: number;
  secret: string;
  pbxSecret: string;
}

/** Request n goes to integration n mod count, signed over its own body with the current time, as a PBX would. */
function signedTarget(name: string, url: string, path: (n: number) => string, signers: Signer[], body: (n: number) => unknown): LoadTarget {
  const signer = (n: number) => signers[n % signers.length]!;
  return {
    name,
    url,
    path: path(0),
    pathFor: path,
    headers: {},
    headersFor: (n) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const s = signer(n);
      return { 'x-chat-gateway-pbx-secret': s.pbxSecret, 'x-chat-gateway-timestamp': timestamp, 'x-chat-gateway-signature': `sha256=${sign(s.secret, timestamp, JSON.stringify(body(n)))}` };
    },
    body,
    classify: answerOf,
  };
}

/** An answer in a word: `processed`/`sent`/`queued` when accepted, else "<status> <error>". */
function answerOf(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { status?: unknown; error?: unknown };
    return status >= 200 && status < 300 ? String(body.status ?? 'unknown') : `${status} ${String(body.error ?? 'unknown')}`;
  } catch {
    return `${status} unparsable`;
  }
}

const ACCEPTED = ['processed', 'sent', 'queued'];

/** More than 1 % of the answers not accepted: the run measured refusals, not events. */
function assertAccepted(load: LoadResult): void {
  const answered = load.requests + load.errors;
  const accepted = ACCEPTED.reduce((n, word) => n + (load.classes[word] ?? 0), 0);
  if (answered > 0 && (answered - accepted) / answered <= 0.01) return;
  throw new Error(`${load.name}: ${answered - accepted} of ${answered} answers not accepted (${JSON.stringify(load.classes)}, errors ${load.errors}); e.g. ${load.sampleFailures[0] ?? '-'}`);
}

/** The same check the endpoint makes, and nothing else. */
async function startBareHmacRoute(secret: string) {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_r, body, done) => done(null, body));
  app.post('/hmac', async (request, reply) => {
    const timestamp = String(request.headers['x-chat-gateway-timestamp'] ?? '');
    const given = Buffer.from(String(request.headers['x-chat-gateway-signature'] ?? '').replace(/^sha256=/, ''), 'hex');
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(request.body as Buffer).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return reply.code(401).send({ success: false });
    return { success: true, status: 'processed', event_type: 'test', action: 'received' };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

type Measured = LoadResult & { cpu: CpuUsage };

/** A warm-up (not counted), then the measured run, with the CPU of every component (/proc) and the services' profile window around it. */
async function warmedLoad(target: LoadTarget, options: { durationS: number; warmupS: number; connections: number }, window?: ReturnType<typeof profileWindow>): Promise<Measured> {
  await runLoad({ ...target, name: `${target.name} (warm-up)` }, { durationS: options.warmupS, connections: options.connections, timeoutS: 20 });
  window?.start();
  const before = cpuSnapshot();
  const result = await runLoad(target, { durationS: options.durationS, connections: options.connections, timeoutS: 20 });
  const cpu = cpuUsage(before, cpuSnapshot());
  window?.stop();
  return { ...result, cpu };
}

/** ms of CPU per answered request, by component (from % of one core over the window). */
function cpuPerRequest(r: Measured): string {
  const perS = Math.max(1, r.okPerS);
  return Object.entries(r.cpu.byComponent)
    .filter(([, pct]) => pct >= 1)
    .map(([label, pct]) => `${label} ${((pct * 10) / perS).toFixed(2)}`)
    .join(', ');
}

async function makeAccounts(stack: Stack, count: number): Promise<DemoAccount[]> {
  const accounts: DemoAccount[] = [];
  while (accounts.length < count) accounts.push(...(await Promise.all(Array.from({ length: Math.min(4, count - accounts.length) }, () => demoAccount(stack)))));
  return accounts;
}

const summary = (r: LoadResult) => `${Math.round(r.okPerS)}/s (p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, non-2xx ${r.non2xx})`;
const ratio = (a: LoadResult, b: LoadResult) => (Math.round(a.okPerS) / Math.max(1, Math.round(b.okPerS))).toFixed(2);

export interface PbxBenchResult {
  bare: Measured;
  recordOnly: Measured;
  sendPath: Measured;
  sending: Measured;
  profiles: { recordOnly: ProcessProfile[]; sending: ProcessProfile[] };
}

export async function pbxBench(options: { durationS: number; connections: number }): Promise<PbxBenchResult> {
  console.log('\n== PBX webhook benchmark (record-only events vs a bare HMAC route; sending events vs the send path)');
  const load = { durationS: options.durationS, warmupS: Math.min(5, options.durationS), connections: options.connections };
  const bareSecret = 'pbxsig_bench_secret_for_the_bare_route_000000';
  const bareRoute = await startBareHmacRoute(bareSecret);
  defer('bare HMAC route', bareRoute.close);
  const recordBody = (n: number) => ({ event_type: n % 2 === 0 ? 'test' : 'inbound_reply', conversation_id: `bench-${n}` });
  const bare = await warmedLoad(signedTarget('bare HMAC route', bareRoute.url, () => '/hmac', [{ integrationId: 0, secret: bareSecret, pbxSecret: 'unused' }], recordBody), load);
  await bareRoute.close();

  // instance-events learns the conversations' recipients (as in the send path's conversations workload), then stops.
  const stack = await startStack(['api', 'policy', 'delivery', 'instance-events']);
  const stop = async () => {
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [stack.isolation.topicPrefix]);
    await deleteSubjects(baseConfig.schemaRegistryUrl, stack.isolation.topicPrefix);
  };
  defer('PBX bench stack', stop);
  const windows = { recordOnly: profileWindow(), sending: profileWindow() };
  let results: Omit<PbxBenchResult, 'profiles' | 'bare'>;
  try {
    // Several customers, as for the send path: every plan caps one customer far below this rate.
    const accounts = await makeAccounts(stack, Number(process.env.BENCH_PBX_CUSTOMERS ?? 8));
    const contacts = Number(process.env.BENCH_CONTACTS_PER_INSTANCE ?? 250);
    const signers: Signer[] = [];
    for (const account of accounts) {
      const made = await withOperator(stack, ({ pool }) =>
        createPbx(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), { customerId: account.customer_id, instanceId: account.instance_id, hmac: true, ratePerMinute: 100_000_000, baseUrl: stack.apiUrl }),
      );
      signers.push({ integrationId: made.pbx_integration_id, secret: made.pbx_signing_secret!, pbxSecret: made.pbx_secret });
    }
    console.log(`bench: pbx: ${contacts} people write to each of the ${accounts.length} instances first`);
    await seedConversations(stack, accounts, contacts);
    await stack.kill('instance-events', 'SIGTERM');
    const pbxPath = (n: number) => `/integrations/pbx/webhook/${signers[n % signers.length]!.integrationId}`;

    // The module switch must be folded before events are accepted.
    const probe = signedTarget('probe', stack.apiUrl, pbxPath, signers, recordBody);
    for (let i = 0; ; i++) {
      const n = signers.length * (1_000_000 + i);
      const response = await fetch(`${stack.apiUrl}${pbxPath(n)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...probe.headersFor!(n) }, body: JSON.stringify(recordBody(n)) });
      if (response.status === 200) break;
      if (i > 100) throw new Error(`the PBX endpoint answers ${response.status}: ${await response.text()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const recordOnly = await warmedLoad(signedTarget('PBX record-only events', stack.apiUrl, pbxPath, signers, recordBody), load, windows.recordOnly);

    // Request n: instance n mod instances replies to person (n / instances) mod contacts, as the send path's conversations workload.
    const person = (n: number) => conversationPhone(Math.floor(n / accounts.length) % contacts);
    const sendPath = await warmedLoad(
      {
        name: 'send path',
        url: stack.apiUrl,
        path: '/api/send-message',
        headers: {},
        headersFor: (n) => ({ authorization: `Bearer ${accounts[n % accounts.length]!.api_key}` }),
        body: (n) => ({ instance_id: accounts[n % accounts.length]!.instance_id, phone: person(n), message: `Your verification code is ${String(n % 1_000_000).padStart(6, '0')}`, message_purpose: 'authentication' }),
        classify: answerOf,
      },
      load,
    );
    const sendingBody = (n: number) => ({ event_type: 'outbound_message', to: person(n), message_text: `Your verification code is ${String(n % 1_000_000).padStart(6, '0')}`, message_purpose: 'authentication', external_message_id: `bench-${n}` });
    const sending = await warmedLoad(signedTarget('PBX sending events', stack.apiUrl, pbxPath, signers, sendingBody), load, windows.sending);
    results = { recordOnly, sendPath, sending };
  } finally {
    await stop();
  }
  const profiles = { recordOnly: windows.recordOnly.read(), sending: windows.sending.read() };
  const { recordOnly, sendPath, sending } = results;
  console.log(`pbx: record-only events ${summary(recordOnly)}; bare HMAC route ${summary(bare)}; ratio (record-only/bare): ${ratio(recordOnly, bare)}`);
  console.log(`pbx: sending events ${summary(sending)}; send path ${summary(sendPath)}; ratio (sending/send path): ${ratio(sending, sendPath)}`);
  for (const r of [bare, recordOnly, sendPath, sending]) console.log(`pbx: ${r.name}: ms of CPU per answer by component: ${cpuPerRequest(r)} (machine ${r.cpu.machineBusyPct} % busy of ${r.cpu.cores} cores)`);
  for (const r of [recordOnly, sendPath, sending]) if (r.sampleFailures.length > 0) console.log(`pbx: ${r.name}: sample failures: ${r.sampleFailures.join(' | ')}`);
  if (profiles.recordOnly.length > 0) console.log(`\n${formatProfiles('PBX record-only events', profiles.recordOnly, recordOnly.ok)}`);
  if (profiles.sending.length > 0) console.log(`\n${formatProfiles('PBX sending events', profiles.sending, sending.ok)}`);
  for (const r of [recordOnly, sendPath, sending]) assertAccepted(r);
  return { bare, recordOnly, sendPath, sending, profiles };
}
