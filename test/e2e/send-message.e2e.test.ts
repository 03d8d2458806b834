import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createPool, sql } from '@gw/db';
import { demoAccount, extraKey, type DemoAccount } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let account: DemoAccount;
let other: DemoAccount;

const body = (overrides: Record<string, unknown> = {}) => ({
  instance_id: account.instance_id,
  phone: '+14155552671',
  message: 'Your order 1001 has shipped.',
  message_purpose: 'transactional',
  ...overrides,
});

function expectApiError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body).toMatchObject({ success: false, error: code });
  expect(typeof result.body.message).toBe('string');
  expect(result.body.message.length).toBeGreaterThan(0);
  expect(typeof result.body.details).toBe('object');
  expect(result.body.details).not.toBeNull();
  expect(JSON.stringify(result.body)).not.toMatch(/\bat .+\.ts:\d+|stack|SELECT |relation "/);
}

async function ledger(instance?: string): Promise<Array<{ number: string; text: string; id: string }>> {
  const query = instance ? `?instance=${encodeURIComponent(instance)}` : '';
  return (await stack.simulator.call('GET', `/sim/ledger${query}`)).body.messages;
}

beforeAll(async () => {
  stack = await startStack();
  account = await demoAccount(stack);
  other = await demoAccount(stack);
});

afterAll(async () => {
  await stack?.stop();
});

describe('POST /api/send-message: success', () => {
  it('sends through the paired instance and answers 200 with a message_id and an integer log_id', async () => {
    const result = await send(stack.apiUrl, account.api_key, body({ message: 'hello from the happy path' }));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({ success: true, status: 'sent', message_id: expect.stringMatching(/^msg_/), log_id: expect.any(Number) });
    expect(Number.isInteger(result.body.log_id)).toBe(true);
    const sent = (await ledger()).filter((m) => m.text === 'hello from the happy path');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.number).toBe('14155552671');
  });

  it('accepts the instance name in place of its id, and a recipient written with spaces', async () => {
    const result = await send(stack.apiUrl, account.api_key, body({ instance_id: account.instance_name, phone: '+1 415 555 2671', message: 'by name' }));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect((await ledger()).filter((m) => m.text === 'by name')).toHaveLength(1);
  });
});

describe('POST /api/send-message: one test per error code', () => {
  it('415 unsupported_media_type when the body is not application/json', async () => {
    const result = await send(stack.apiUrl, account.api_key, 'instance_id=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expectApiError(result, 415, 'unsupported_media_type');
    const plain = await send(stack.apiUrl, account.api_key, JSON.stringify(body()), { 'content-type': 'text/plain' });
    expectApiError(plain, 415, 'unsupported_media_type');
  });

  it('400 invalid_json for a body that is not JSON', async () => {
    expectApiError(await send(stack.apiUrl, account.api_key, '{"instance_id": "x",'), 400, 'invalid_json');
    expectApiError(await send(stack.apiUrl, account.api_key, ''), 400, 'invalid_json');
  });

  it('401 invalid_api_key for a missing, malformed or unknown key, all answered alike', async () => {
    const missing = await send(stack.apiUrl, null, body());
    const malformed = await send(stack.apiUrl, 'not-a-key', body());
    const unknown = await send(stack.apiUrl, `gw_0123456789abcdef_${'A'.repeat(43)}`, body());
    const wrongSecret = await send(stack.apiUrl, account.api_key.slice(0, -4) + 'AAAA', body());
    for (const result of [missing, malformed, unknown, wrongSecret]) expectApiError(result, 401, 'invalid_api_key');
    expect(new Set([missing, malformed, unknown, wrongSecret].map((r) => JSON.stringify(r.body))).size).toBe(1);
  });

  it('401 revoked_api_key for a revoked key', async () => {
    const revoked = await extraKey(stack, account.customer_id, true);
    expectApiError(await send(stack.apiUrl, revoked, body()), 401, 'revoked_api_key');
  });

  it('422 validation_error for a property beyond the four, naming it', async () => {
    const result = await send(stack.apiUrl, account.api_key, body({ campaign: 'spring' }));
    expectApiError(result, 422, 'validation_error');
    expect(result.body.details).toMatchObject({ field: 'campaign', rule: 'additionalProperties' });
  });

  it('422 validation_error for a missing field, a wrong type and an unparseable phone', async () => {
    const { phone: _phone, ...withoutPhone } = body();
    const missing = await send(stack.apiUrl, account.api_key, withoutPhone);
    expectApiError(missing, 422, 'validation_error');
    expect(missing.body.details.field).toBe('phone');

    const wrongType = await send(stack.apiUrl, account.api_key, body({ message: 42 }));
    expectApiError(wrongType, 422, 'validation_error');
    expect(wrongType.body.details.field).toBe('message');

    const badPhone = await send(stack.apiUrl, account.api_key, body({ phone: 'call me' }));
    expectApiError(badPhone, 422, 'validation_error');
    expect(badPhone.body.details).toMatchObject({ field: 'phone', rule: 'international_format' });

    const notAnObject = await send(stack.apiUrl, account.api_key, '[1,2]');
    expectApiError(notAnObject, 422, 'validation_error');
  });

  it('422 message_purpose_required when the purpose is missing', async () => {
    const { message_purpose: _purpose, ...withoutPurpose } = body();
    const result = await send(stack.apiUrl, account.api_key, withoutPurpose);
    expectApiError(result, 422, 'message_purpose_required');
    expect(result.body.details.field).toBe('message_purpose');
  });

  it('422 message_purpose_not_allowed for marketing', async () => {
    const result = await send(stack.apiUrl, account.api_key, body({ message_purpose: 'marketing' }));
    expectApiError(result, 422, 'message_purpose_not_allowed');
    expect(result.body.details.allowed).toContain('transactional');
  });

  it('404 invalid_instance for an unknown instance and for another customer\'s, by id and by name', async () => {
    expectApiError(await send(stack.apiUrl, account.api_key, body({ instance_id: 'ins_doesnotexist' })), 404, 'invalid_instance');
    expectApiError(await send(stack.apiUrl, account.api_key, body({ instance_id: other.instance_id })), 404, 'invalid_instance');
    expectApiError(await send(stack.apiUrl, account.api_key, body({ instance_id: other.instance_name })), 404, 'invalid_instance');
    expect((await ledger(other.instance_name)).length).toBe(0);
  });

  it('502 gateway_send_failed when the number is not on the network, after the checks passed', async () => {
    // +1 999 is no real area code: the simulator treats numbers starting 1999 as not on the network.
    const result = await send(stack.apiUrl, account.api_key, body({ phone: '+1 999 555 0100', message: 'to nobody' }));
    expectApiError(result, 502, 'gateway_send_failed');
    expect(result.body.details).toMatchObject({ reason: 'unknown_number', log_id: expect.any(Number) });
    expect((await ledger()).filter((m) => m.text === 'to nobody')).toHaveLength(0);
  });

  it('500 internal_error without internals when the database fails', async () => {
    const client = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
    await client.query(sql.typeAlias('void')`ALTER TABLE idempotency_records RENAME TO idempotency_records_away`);
    try {
      const result = await send(stack.apiUrl, account.api_key, body({ message: 'db down' }), { 'idempotency-key': 'db-down-1' });
      expectApiError(result, 500, 'internal_error');
      expect(result.body.details).toEqual({});
    } finally {
      await client.query(sql.typeAlias('void')`ALTER TABLE idempotency_records_away RENAME TO idempotency_records`);
      await client.end();
    }
    expect((await ledger()).filter((m) => m.text === 'db down')).toHaveLength(0);
  });
});

describe('Idempotency-Key', () => {
  it('a retried request returns the recorded outcome and sends once', async () => {
    const request = body({ message: 'idempotent once' });
    const first = await send(stack.apiUrl, account.api_key, request, { 'idempotency-key': 'order-1001-shipped' });
    const second = await send(stack.apiUrl, account.api_key, request, { 'idempotency-key': 'order-1001-shipped' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect((await ledger()).filter((m) => m.text === 'idempotent once')).toHaveLength(1);
  });

  it('concurrent retries with one key send once and all get the same answer', async () => {
    const request = body({ message: 'idempotent concurrent' });
    const results = await Promise.all(Array.from({ length: 6 }, () => send(stack.apiUrl, account.api_key, request, { 'idempotency-key': 'concurrent-key' })));
    for (const result of results) expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(new Set(results.map((r) => r.body.message_id)).size).toBe(1);
    expect((await ledger()).filter((m) => m.text === 'idempotent concurrent')).toHaveLength(1);
  });

  it('a rejected request replays its rejection', async () => {
    const request = body({ message_purpose: 'support', phone: '+1 999 555 0101', message: 'idem fail' });
    const first = await send(stack.apiUrl, account.api_key, request, { 'idempotency-key': 'fail-key' });
    const second = await send(stack.apiUrl, account.api_key, request, { 'idempotency-key': 'fail-key' });
    expect(first.status).toBe(502);
    expect(second.body).toEqual(first.body);
  });

  it('the same key with a different request is refused', async () => {
    await send(stack.apiUrl, account.api_key, body({ message: 'key reuse a' }), { 'idempotency-key': 'reused' });
    const reused = await send(stack.apiUrl, account.api_key, body({ message: 'key reuse b' }), { 'idempotency-key': 'reused' });
    expectApiError(reused, 422, 'validation_error');
    expect(reused.body.details).toMatchObject({ field: 'Idempotency-Key', rule: 'reused_with_different_request' });
    expect((await ledger()).filter((m) => m.text === 'key reuse b')).toHaveLength(0);
  });
});

describe('contract and utility routes', () => {
  it('GET /openapi.json serves the v1 contract, the same as the committed openapi.json', async () => {
    const served = await (await fetch(`${stack.apiUrl}/openapi.json`)).json();
    expect(served.openapi).toBe('3.0.3');
    expect(served.info.version).toBe('1.0.0');
    expect(served.paths['/api/send-message'].post).toBeDefined();
    const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
    expect({ ...served, servers: undefined }).toEqual({ ...committed, servers: undefined });
  });

  it('GET / answers a smoke response and /metrics exposes HTTP latency', async () => {
    const home = await fetch(`${stack.apiUrl}/`);
    expect(home.status).toBe(200);
    expect(await home.json()).toMatchObject({ status: 'ok' });
    const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    expect(metrics).toContain('gateway_http_request_duration_seconds_bucket');
    expect(metrics).toContain('route="/api/send-message"');
  });

  it('the consumers expose their lag per group and partition, measured against Kafka', async () => {
    for (const service of ['policy', 'delivery'] as const) {
      const metricsUrl = stack.readyUrl(service).replace('/readyz', '/metrics');
      let text = '';
      for (let i = 0; i < 50 && !text.includes('gateway_consumer_lag{'); i++) {
        text = await (await fetch(metricsUrl)).text();
        if (!text.includes('gateway_consumer_lag{')) await new Promise((r) => setTimeout(r, 200));
      }
      const lines = text.split('\n').filter((l) => l.startsWith('gateway_consumer_lag{'));
      expect(lines.length, `${service} lag series`).toBe(6); // one per partition
      expect(lines[0]).toMatch(new RegExp(`group="${stack.isolation.topicPrefix.replace('.', '\\.')}${service}"`));
      for (const line of lines) expect(Number(line.split(' ').pop())).toBeGreaterThanOrEqual(0);
    }
  });

  it('an unknown route answers 404 in the ApiError shape', async () => {
    const response = await fetch(`${stack.apiUrl}/api/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ success: false, error: 'not_found' });
  });
});
