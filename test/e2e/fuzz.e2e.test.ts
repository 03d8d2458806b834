import { describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { ERROR_CODES } from '@gw/contract';
import { sql, z } from '@gw/db';
import { SecretBox } from '@gw/security';
import { createPbx } from '@gw/accounts';
import { demoAccount, extraKey, withOperator } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { useStack, type StackSuite } from '../support/suite.ts';
import { FUZZ_INGEST_BODY_LIMIT, malformedRequests, pbxSigningHeaders, type Endpoint, type FuzzRequest, type FuzzTargets } from '../fuzz/malformed.ts';

// Fuzz of the three POST endpoints: at least 20,000 malformed requests (FUZZ_REQUESTS), almost all
// of them authenticated (and, for PBX, validly signed) so that they reach parsing, over real HTTP
// at a concurrency of 32. Every answer must be a 4xx ApiError, none may echo a phone number or a
// text of its request, nothing may be sent or logged as a send, and the gateway must still send
// normally and be ready afterwards. The seed is printed; FUZZ_SEED=<seed> repeats a run.
const SERVICES = ['api', 'policy', 'delivery', 'instance-events'] as const;
// The ingest's per-instance rate limit is raised out of the way, as the PBX one is below: the fuzz
// is about parsing, and its ~6,000 ingest requests to one instance would otherwise meet the limit.
const suite: StackSuite = useStack({
  services: [...SERVICES],
  env: { INSTANCE_EVENT_BURST: '1000000', INSTANCE_EVENT_RATE_PER_SECOND: '1000000', INSTANCE_EVENT_BODY_LIMIT_BYTES: String(FUZZ_INGEST_BODY_LIMIT) },
});

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 20_500);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601);
const CONCURRENCY = 32;
const CODES = new Set<string>(ERROR_CODES);

interface Answer {
  request: FuzzRequest;
  /** The second, unchanged copy of a PBX request (a replay). */
  replayed: boolean;
  status: number;
  text: string;
}

/** What is wrong with an answer, or nothing. */
function problems(answer: Answer): string[] {
  const { request, status, text } = answer;
  const found: string[] = [];
  if (status >= 500) found.push(`5xx (${status})`);
  else if (status < 400) found.push(`not refused (${status})`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    found.push('body is not JSON');
  }
  const error = body as { success?: unknown; error?: unknown; message?: unknown; details?: unknown } | undefined;
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (body !== undefined) {
    if (!isObject(body)) found.push('body is not an object');
    else {
      const keys = Object.keys(body as object).sort().join(',');
      if (keys !== 'details,error,message,success') found.push(`ApiError keys are ${keys}`);
      if (error!.success !== false) found.push('success is not false');
      if (typeof error!.error !== 'string' || !CODES.has(error!.error)) found.push(`error ${JSON.stringify(error!.error)} is not a contract code`);
      if (typeof error!.message !== 'string' || error!.message.length === 0) found.push('message is not a text');
      if (!isObject(error!.details)) found.push('details is not an object');
    }
  }
  const expected = answer.replayed ? { status: 401, code: 'invalid_pbx_webhook' } : request.expect;
  if (expected.status !== undefined && status !== expected.status) found.push(`status ${status}, expected ${expected.status}`);
  if (expected.code !== undefined && error?.error !== expected.code) found.push(`code ${String(error?.error)}, expected ${expected.code}`);
  for (const marker of request.markers) if (text.includes(marker)) found.push(`echoes ${marker}`);
  return found;
}

async function fuzzTargets(): Promise<FuzzTargets & { customerId: string }> {
  const { stack, db } = suite;
  const account = await demoAccount(stack);
  const signed = await withOperator(stack, ({ pool }) =>
    createPbx(pool, new SecretBox(stack.env.GATEWAY_SECRET_KEY!), {
      customerId: account.customer_id,
      instanceId: account.instance_id,
      hmac: true,
      // Out of the way: the fuzz is about parsing, not the rate limit.
      ratePerMinute: 10_000_000,
      baseUrl: stack.apiUrl,
    }),
  );
  const managerInstance = await db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
  const hook = await stack.simulator.call('GET', `/webhook/find/${managerInstance}`);
  // The URL names the instance; the token is the webhook's Authorization header (fuzzed in the path, the older form the ingest still takes).
  const ingest = /^\/integrations\/instances\/([^/]+)\/events$/.exec(new URL(hook.body.url as string).pathname);
  if (!ingest || decodeURIComponent(ingest[1]!) !== account.instance_id) throw new Error(`unexpected ingest URL ${hook.body.url}`);
  const bearer = /^Bearer (\S+)$/.exec(String((hook.body.headers as Record<string, string> | null)?.Authorization ?? ''));
  if (!bearer) throw new Error('the manager holds no Authorization header for the ingest');
  return {
    customerId: account.customer_id,
    instanceId: account.instance_id,
    instanceName: account.instance_name,
    managerInstance,
    apiKey: account.api_key,
    revokedApiKey: await extraKey(stack, account.customer_id, true),
    pbxIntegrationId: signed.pbx_integration_id,
    pbxSecret: signed.pbx_secret,
    pbxSigningSecret: signed.pbx_signing_secret!,
    otherPbxIntegrationId: account.pbx_integration_id,
    ingestToken: bearer[1]!,
  };
}

describe('fuzz: malformed requests at the three POST endpoints', () => {
  it(`${TOTAL} malformed requests: each refused with a 4xx ApiError, nothing sent; then a normal send succeeds`, async () => {
    const { stack, db } = suite;
    const targets = await fuzzTargets();
    const pool = new Pool(stack.apiUrl, { connections: CONCURRENCY, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const usedSignatures = new Set<string>();
    const requests = malformedRequests(targets, { seed: SEED, total: TOTAL });

    const counts: Record<Endpoint, { total: number; authenticated: number; statuses: Record<string, number> }> = {
      send: { total: 0, authenticated: 0, statuses: {} },
      pbx: { total: 0, authenticated: 0, statuses: {} },
      ingest: { total: 0, authenticated: 0, statuses: {} },
    };
    const statuses: Record<string, number> = {};
    const families: Record<string, Record<string, number>> = {};
    const failures: string[] = [];
    let failureCount = 0;
    let connectionErrors = 0;
    let serverErrors = 0;

    const post = async (request: FuzzRequest, headers: Record<string, string>, replayed: boolean) => {
      const counted = counts[request.endpoint];
      counted.total++;
      if (request.authenticated && !replayed) counted.authenticated++;
      const family = `${request.endpoint} ${replayed ? 'auth.replay' : request.family}`;
      const tally = (families[family] ??= {});
      let answer: Answer;
      try {
        const response = await pool.request({ path: request.path, method: 'POST', headers, body: request.body });
        answer = { request, replayed, status: response.statusCode, text: await response.body.text() };
      } catch (error) {
        connectionErrors++;
        failureCount++;
        tally.error = (tally.error ?? 0) + 1;
        if (failures.length < 25) failures.push(`#${request.n} ${family}: connection error ${(error as Error).message}`);
        return;
      }
      counted.statuses[answer.status] = (counted.statuses[answer.status] ?? 0) + 1;
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      tally[answer.status] = (tally[answer.status] ?? 0) + 1;
      if (answer.status >= 500) serverErrors++;
      const found = problems(answer);
      if (found.length > 0) {
        failureCount++;
        if (failures.length < 25) failures.push(`#${request.n} ${family} (body ${request.bodyFamily}): ${found.join('; ')} :: ${answer.text.slice(0, 240)}`);
      }
    };

    const worker = async () => {
      for (let next = requests.next(); !next.done; next = requests.next()) {
        const request = next.value;
        const headers = { ...request.headers, ...pbxSigningHeaders(request, Math.floor(Date.now() / 1000), usedSignatures) };
        await post(request, headers, false);
        // The same signed request once more: its signature has been used.
        if (request.replay) await post(request, headers, true);
      }
    };

    const started = performance.now();
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      await pool.close();
    }
    const seconds = (performance.now() - started) / 1000;

    const sent = counts.send.total + counts.pbx.total + counts.ingest.total;
    const authenticated = counts.send.authenticated + counts.pbx.authenticated + counts.ingest.authenticated;
    const perEndpoint = (Object.keys(counts) as Endpoint[]).map((e) => `${e} ${counts[e].total} (${counts[e].authenticated} authenticated) ${JSON.stringify(counts[e].statuses)}`).join('; ');
    console.log(
      `fuzz: seed ${SEED}, ${sent} requests in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)}/s, concurrency ${CONCURRENCY}), ` +
        `${((100 * authenticated) / sent).toFixed(1)}% authenticated; statuses ${JSON.stringify(statuses)}; ${perEndpoint}; ` +
        `5xx ${serverErrors}, connection errors ${connectionErrors}, failed checks ${failureCount}`,
    );
    console.log(`fuzz families (statuses): ${JSON.stringify(Object.fromEntries(Object.entries(families).sort()))}`);

    expect(failures, `${failureCount} answers failed their checks (seed ${SEED}); first ones:\n${failures.join('\n')}`).toEqual([]);
    expect(serverErrors).toBe(0);
    expect(connectionErrors).toBe(0);
    expect(sent).toBeGreaterThanOrEqual(20_000);
    expect(authenticated / sent).toBeGreaterThanOrEqual(0.9);
    for (const endpoint of Object.keys(counts) as Endpoint[]) expect(counts[endpoint].total).toBeGreaterThan(TOTAL / 5);

    // Nothing was sent or decided: no message reached the manager, no entry in the policy log.
    const ledger = (await stack.simulator.call('GET', '/sim/ledger')).body.messages as Array<{ text: string }>;
    expect(ledger.filter((m) => m.text.includes('FUZZ'))).toEqual([]);
    expect(ledger).toEqual([]);
    const Count = z.object({ n: z.number() });
    const logged = await db.oneFirst(sql.type(Count)`SELECT count(*)::int AS n FROM policy_log WHERE customer_id = ${targets.customerId}`);
    expect(logged).toBe(0);
    // The ingest's refusals were recorded (the fuzz reached its checks).
    const rejected = await db.oneFirst(sql.type(Count)`SELECT count(*)::int AS n FROM instance_event_rejections WHERE instance_id = ${targets.instanceId}`);
    expect(rejected).toBeGreaterThan(0);

    // Right afterwards a normal send succeeds within its deadline, and every service is ready.
    const deadlineMs = Number(stack.env.SEND_DEADLINE_MS);
    const sendStarted = performance.now();
    const normal = await send(stack.apiUrl, targets.apiKey, { instance_id: targets.instanceId, phone: '+14155550188', message: 'Your order 2207 has shipped.', message_purpose: 'transactional' });
    const sendMs = performance.now() - sendStarted;
    expect(normal.status, JSON.stringify(normal.body)).toBe(200);
    expect(normal.body).toMatchObject({ success: true, status: 'sent', message_id: expect.stringMatching(/^msg_/) });
    expect(sendMs).toBeLessThan(deadlineMs);
    const after = (await stack.simulator.call('GET', '/sim/ledger')).body.messages as Array<{ text: string }>;
    expect(after.map((m) => m.text)).toEqual(['Your order 2207 has shipped.']);
    for (const name of SERVICES) expect((await fetch(stack.readyUrl(name))).status, `${name} /readyz`).toBe(200);
    console.log(`fuzz: the normal send afterwards answered ${normal.body.status} in ${Math.round(sendMs)} ms (deadline ${deadlineMs} ms); ${SERVICES.join(', ')} ready`);
  }, 150_000);
});
