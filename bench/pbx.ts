// The PBX benchmark: accepted PBX events per second with HMAC verification on the real stack,
// beside a bare fastify route doing the same HMAC check, measured in the same run. Reports only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { SecretBox } from '@gw/security';
import { createPbx } from '@gw/accounts';
import { demoAccount, withOperator } from '../test/support/accounts.ts';
import { startStack } from '../test/support/stack.ts';
import { runLoad, type LoadResult, type LoadTarget } from './lib/load.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';
import { baseConfig } from '../test/support/infra.ts';

const sign = (secret: string, timestamp: string, raw: string) => createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex');

function signedTarget(name: string, url: string, path: string, secret: string, pbxSecret: string): LoadTarget {
  const body = (n: number) => ({ event_type: 'test', conversation_id: `bench-${n}` });
  return {
    name,
    url,
    path,
    headers: { 'x-chat-gateway-pbx-secret': pbxSecret },
    // Each request is signed over its own body with the current time, as a PBX would.
    headersFor: (n) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      return { 'x-chat-gateway-timestamp': timestamp, 'x-chat-gateway-signature': `sha256=${sign(secret, timestamp, JSON.stringify(body(n)))}` };
    },
    body,
  };
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

export async function pbxBench(options: { durationS: number; connections: number }): Promise<{ pbx: LoadResult; bare: LoadResult }> {
  console.log('\n== PBX webhook benchmark');
  const bareSecret = 'pbxsig_bench_secret_for_the_bare_route_000000';
  const bare = await startBareHmacRoute(bareSecret);
  defer('bare HMAC route', bare.close);
  const bareResult = await runLoad(signedTarget('bare HMAC route', bare.url, '/hmac', bareSecret, 'unused'), { durationS: options.durationS, connections: options.connections, timeoutS: 10 });

  const stack = await startStack(['api', 'policy']);
  const stop = async () => {
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [stack.isolation.topicPrefix]);
    await deleteSubjects(baseConfig.schemaRegistryUrl, stack.isolation.topicPrefix);
  };
  defer('PBX bench stack', stop);
  const account = await demoAccount(stack);
  const integration = await withOperator(stack, ({ pool }) =>
    createPbx(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), { customerId: account.customer_id, instanceId: account.instance_id, hmac: true, ratePerMinute: 100_000_000, baseUrl: stack.apiUrl }),
  );
  // The module switch must be folded before `test` events are accepted.
  const probe = signedTarget('probe', stack.apiUrl, '', integration.pbx_signing_secret!, integration.pbx_secret);
  for (let i = 0; ; i++) {
    const headers = { 'content-type': 'application/json', ...probe.headers, ...probe.headersFor!(1_000_000 + i) };
    const response = await fetch(`${stack.apiUrl}/integrations/pbx/webhook/${integration.pbx_integration_id}`, { method: 'POST', headers, body: JSON.stringify(probe.body(1_000_000 + i)) });
    if (response.status === 200) break;
    if (i > 100) throw new Error(`the PBX endpoint answers ${response.status}: ${await response.text()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const pbxResult = await runLoad(
    signedTarget('PBX webhook', stack.apiUrl, `/integrations/pbx/webhook/${integration.pbx_integration_id}`, integration.pbx_signing_secret!, integration.pbx_secret),
    { durationS: options.durationS, connections: options.connections, timeoutS: 10 },
  );
  const rate = (r: LoadResult) => Math.round(r.okPerS);
  console.log(
    `pbx: ${rate(pbxResult)} accepted events/s with HMAC (p50 ${pbxResult.latencyMs.p50} ms, p99 ${pbxResult.latencyMs.p99} ms, non-2xx ${pbxResult.non2xx}); ` +
      `bare HMAC route: ${rate(bareResult)} req/s (p50 ${bareResult.latencyMs.p50} ms, p99 ${bareResult.latencyMs.p99} ms); ratio (pbx/bare): ${(rate(pbxResult) / Math.max(1, rate(bareResult))).toFixed(2)}`,
  );
  if (pbxResult.sampleFailures.length > 0) console.log(`pbx: sample failures: ${pbxResult.sampleFailures.join(' | ')}`);
  return { pbx: pbxResult, bare: bareResult };
}
