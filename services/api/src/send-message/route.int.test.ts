import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { CORRELATION_HEADER, type SendRequested } from '@gw/events';
import { insertEntries } from '@gw/policy-log';
import { createApiKey, createInstance, revokeApiKey } from '@gw/accounts';
import { accepted, decision, delivered, failedDelivery, NO_ANSWER, rejected } from '../../../../test/support/api/fake-replies.ts';
import { until, useApiFixture, type FollowedRecord, type TestAccount } from '../../../../test/support/api/api-fixture.ts';

// POST /api/send-message in-process, over real Postgres, Kafka and the registry; the reply router
// is a fake that answers what each test needs.
const suite = useApiFixture();
let account: TestAccount;
let other: TestAccount;
let managerInstance: string;

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  managerInstance = await suite.fixture.runtime.pool.oneFirst(
    sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`,
  );
}, 60_000);

const body = (overrides: Record<string, unknown> = {}) => ({
  instance_id: account.instance_id,
  phone: '+14155552671',
  message: `Your order ${randomUUID().slice(0, 8)} has shipped.`,
  message_purpose: 'transactional',
  ...overrides,
});

interface SendOptions {
  key?: string | null;
  headers?: Record<string, string>;
  contentType?: string | null;
}

async function send(payload: unknown, options: SendOptions = {}) {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? account.api_key : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const response = await suite.fixture.app.inject({
    method: 'POST',
    url: '/api/send-message',
    headers: { ...headers, ...options.headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: response.statusCode, body: response.json() };
}

const lastWait = () => suite.fixture.replies.calls.at(-1)!;
const isCommand = (record: FollowedRecord, match: (command: SendRequested) => boolean) => record.event.type === 'SendRequested' && match(record.event.payload);
const commandsWhere = (match: (command: SendRequested) => boolean) => suite.fixture.records.filter((r) => isCommand(r, match)).map((r) => r.event.payload as SendRequested);
async function appended(commandId: string): Promise<{ key: string | null; headers: Record<string, string>; command: SendRequested }> {
  const record = await suite.fixture.record((r) => isCommand(r, (c) => c.correlation_id === commandId), `the command ${commandId}`);
  return { key: record.key, headers: record.headers, command: record.event.payload as SendRequested };
}

/**
 * A send of the same customer that is appended: the customer's records stay in order on one
 * partition, so once it is read, anything a refused request had appended before it was read too.
 */
async function afterLaterSend(customer: TestAccount = account): Promise<void> {
  suite.fixture.replies.answerWith(accepted);
  const marker = body({ instance_id: customer.instance_id, message: `barrier ${randomUUID()}` });
  const result = await send(marker, { key: customer.api_key });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  await suite.fixture.record((r) => isCommand(r, (c) => c.message === marker.message), 'the barrier send');
}

/** Refused requests: the reply router was never asked and nothing was appended. */
async function expectNothingAppended(messages: string[], waitsBefore: number): Promise<void> {
  expect(suite.fixture.replies.calls.length).toBe(waitsBefore);
  await afterLaterSend();
  expect(commandsWhere((c) => messages.includes(c.message))).toEqual([]);
}

describe('POST /api/send-message: answers', () => {
  it('200 sent with the delivery\'s ids, after appending the command the reply router waits on', async () => {
    suite.fixture.replies.answerWith(delivered);
    const request = body();
    const result = await send(request);
    const { commandId, deadlineMs, options } = lastWait();
    expect(result).toEqual({ status: 200, body: { success: true, status: 'sent', message_id: `msg_of_${commandId}`, log_id: 7001 } });
    expect(deadlineMs).toBe(suite.fixture.runtime.config.api.sendDeadlineMs);
    expect(options).toEqual({ checkStoreFirst: false });

    const record = await appended(commandId);
    expect(record.key).toBe(account.customer_id);
    expect(record.headers[CORRELATION_HEADER]).toBe(commandId);
    expect(record.command).toEqual({
      event_id: expect.any(String),
      correlation_id: commandId,
      occurred_at: expect.any(Number),
      customer_id: account.customer_id,
      instance_id: account.instance_id,
      instance_name: managerInstance,
      message_id: expect.stringMatching(/^msg_/),
      phone: '+14155552671',
      message: request.message,
      message_purpose: 'transactional',
      source: 'api',
      idempotency_key: null,
    });
  });

  it('finds the instance by its name, and normalises a number written with spaces', async () => {
    suite.fixture.replies.answerWith(accepted);
    const request = body({ instance_id: account.instance_name, phone: '+1 415 555 2671' });
    const result = await send(request, { contentType: 'application/json; charset=utf-8' });
    const { commandId } = lastWait();
    expect(result).toEqual({ status: 200, body: { success: true, status: 'queued', message_id: `msg_of_${commandId}`, log_id: 7001 } });
    expect((await appended(commandId)).command).toMatchObject({ instance_id: account.instance_id, phone: '+14155552671', message: request.message });
  });

  it('an instance id wins over another instance of the customer named like it', async () => {
    const namesake = await createInstance(suite.fixture.runtime.pool, suite.fixture.box, {
      customerId: account.customer_id,
      name: account.instance_id,
      managerUrl: 'http://127.0.0.1:9',
      managerApiKey: 'unused',
      createOnManager: false,
    });
    suite.fixture.replies.answerWith(accepted);
    expect((await send(body({ instance_id: account.instance_id }))).status).toBe(200);
    expect((await appended(lastWait().commandId)).command.instance_id).toBe(account.instance_id);
    expect((await send(body({ instance_id: namesake.instance_id }))).status).toBe(200);
    expect((await appended(lastWait().commandId)).command).toMatchObject({ instance_id: namesake.instance_id, instance_name: namesake.manager_instance });
  });

  it('a policy refusal answers with its code and status, the failed rule\'s details and the log entry', async () => {
    suite.fixture.replies.answerWith(rejected('recipient_suppressed', 'This recipient has opted out of your messages.', { rule: 'recipient_not_suppressed', source: 'opt_out' }));
    const result = await send(body());
    const { commandId } = lastWait();
    expect(result).toEqual({
      status: 403,
      body: {
        success: false,
        error: 'recipient_suppressed',
        message: 'This recipient has opted out of your messages.',
        details: { rule: 'recipient_not_suppressed', source: 'opt_out', message_id: `msg_of_${commandId}`, log_id: 7001, policy_version: 'test-policy' },
      },
    });
    await appended(commandId);
  });

  it('a limit refusal is 429 and a paused instance 423', async () => {
    suite.fixture.replies.answerWith(rejected('daily_message_limit_exceeded', 'The daily message limit is reached.', { rule: 'daily_limit', limit: 100 }));
    expect(await send(body())).toMatchObject({ status: 429, body: { success: false, error: 'daily_message_limit_exceeded', details: { limit: 100 } } });
    suite.fixture.replies.answerWith(rejected('instance_paused_for_review', 'The instance is paused for review.', { rule: 'instance_not_paused' }));
    expect(await send(body())).toMatchObject({ status: 423, body: { success: false, error: 'instance_paused_for_review' } });
  });

  it('502 gateway_send_failed when the delivery failed for certain after the checks passed', async () => {
    suite.fixture.replies.answerWith(failedDelivery);
    const result = await send(body());
    const { commandId } = lastWait();
    expect(result).toEqual({
      status: 502,
      body: {
        success: false,
        error: 'gateway_send_failed',
        message: 'The message passed the responsible-messaging checks but could not be delivered through the instance.',
        details: { reason: 'unknown_number', detail: 'The number is not on the network.', message_id: `msg_of_${commandId}`, log_id: 7001 },
      },
    });
  });

  it('nothing known by the deadline: 500 internal_error naming the command, which was appended', async () => {
    suite.fixture.replies.answerWith(NO_ANSWER);
    const result = await send(body());
    const { commandId } = lastWait();
    const record = await appended(commandId);
    expect(result).toEqual({
      status: 500,
      body: {
        success: false,
        error: 'internal_error',
        message: 'The message was recorded but not yet processed. Retry with the same Idempotency-Key to get its outcome.',
        details: { state: 'pending_decision', message_id: record.command.message_id, command_id: commandId },
      },
    });
  });
});

describe('POST /api/send-message: authentication', () => {
  const INVALID = {
    success: false,
    error: 'invalid_api_key',
    message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
    details: { header: 'Authorization', scheme: 'Bearer' },
  };

  it('401 invalid_api_key, one answer for a missing, malformed, unknown or wrong key; nothing appended', async () => {
    const waits = suite.fixture.replies.calls.length;
    const requests = Array.from({ length: 6 }, () => body());
    const keyParts = (key: string) => /^gw_([0-9a-f]{16})_(.+)$/.exec(key)!;
    const answers = [
      await send(requests[0], { key: null }),
      await send(requests[1], { key: 'not-a-key' }),
      await send(requests[2], { key: `gw_0123456789abcdef_${'A'.repeat(43)}` }),
      await send(requests[3], { key: `${account.api_key.slice(0, -4)}AAAA` }),
      await send(requests[4], { key: null, headers: { authorization: `Basic ${account.api_key}` } }),
      // This key's id with another key's (valid) secret.
      await send(requests[5], { key: `gw_${keyParts(account.api_key)[1]}_${keyParts(other.api_key)[2]}` }),
    ];
    for (const answer of answers) expect(answer).toEqual({ status: 401, body: INVALID });
    await expectNothingAppended(requests.map((r) => r.message), waits);
  });

  it('401 revoked_api_key for a revoked key, refused from the moment it is revoked', async () => {
    const created = await createApiKey(suite.fixture.runtime.pool, account.customer_id, 'soon revoked');
    suite.fixture.replies.answerWith(accepted);
    expect((await send(body(), { key: created.api_key })).status).toBe(200);
    await revokeApiKey(suite.fixture.runtime.pool, created.key_id);
    const waits = suite.fixture.replies.calls.length;
    const request = body();
    expect(await send(request, { key: created.api_key })).toEqual({
      status: 401,
      body: { success: false, error: 'revoked_api_key', message: 'This API key has been revoked. Create a new key in the dashboard.', details: { key_id: created.key_id } },
    });
    await expectNothingAppended([request.message], waits);
  });
});

describe('POST /api/send-message: request checks', () => {
  it('415 unsupported_media_type for any other media type, or none', async () => {
    const waits = suite.fixture.replies.calls.length;
    const request = body();
    for (const [contentType, received] of [
      ['text/plain', 'text/plain'],
      ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
      [null, null],
    ] as const) {
      expect(await send(request, { contentType })).toEqual({
        status: 415,
        body: { success: false, error: 'unsupported_media_type', message: 'This endpoint requires Content-Type: application/json.', details: { expected: 'application/json', received } },
      });
    }
    await expectNothingAppended([request.message], waits);
  });

  it('the key is checked before the media type', async () => {
    expect(await send(body(), { key: null, contentType: 'text/plain' })).toMatchObject({ status: 401, body: { error: 'invalid_api_key' } });
  });

  it('400 invalid_json for a body that is not JSON, or empty', async () => {
    const waits = suite.fixture.replies.calls.length;
    const INVALID_JSON = { success: false, error: 'invalid_json', message: 'The request body is not valid JSON.', details: { hint: 'Send a JSON object matching the documented request schema.' } };
    expect(await send('{"instance_id": "x",')).toEqual({ status: 400, body: INVALID_JSON });
    expect(await send('')).toEqual({ status: 400, body: INVALID_JSON });
    expect(suite.fixture.replies.calls.length).toBe(waits);
  });

  it('413 payload_too_large for a body over the limit', async () => {
    const limit = suite.fixture.runtime.config.api.bodyLimitBytes;
    const request = body({ message: 'x'.repeat(limit) });
    const waits = suite.fixture.replies.calls.length;
    expect(await send(request)).toEqual({ status: 413, body: { success: false, error: 'payload_too_large', message: 'The request body is too large.', details: {} } });
    expect(suite.fixture.replies.calls.length).toBe(waits);
  });

  it('422 validation_error naming the field: an extra property, a missing one, a wrong type, an unparseable phone, a body that is no object', async () => {
    const waits = suite.fixture.replies.calls.length;
    const extra = body({ campaign: 'spring' });
    expect(await send(extra)).toEqual({
      status: 422,
      body: {
        success: false,
        error: 'validation_error',
        message: 'Invalid request: campaign is not an allowed property.',
        details: { field: 'campaign', rule: 'additionalProperties', errors: [{ field: 'campaign', rule: 'additionalProperties', message: 'campaign is not an allowed property' }] },
      },
    });
    const { phone: _phone, ...withoutPhone } = body();
    expect(await send(withoutPhone)).toMatchObject({ status: 422, body: { error: 'validation_error', details: { field: 'phone', rule: 'required' } } });
    expect(await send(body({ message: 42 }))).toMatchObject({ status: 422, body: { error: 'validation_error', details: { field: 'message', rule: 'type' } } });
    expect(await send(body({ message: 'nul \u0000 inside' }))).toMatchObject({ status: 422, body: { error: 'validation_error', details: { field: 'message', rule: 'pattern' } } });
    const badPhone = body({ phone: 'call me' });
    expect(await send(badPhone)).toEqual({
      status: 422,
      body: { success: false, error: 'validation_error', message: 'phone must be a possible number in international format, e.g. +14155552671.', details: { field: 'phone', rule: 'international_format' } },
    });
    expect(await send('[1,2]')).toMatchObject({ status: 422, body: { error: 'validation_error', details: { field: '', rule: 'type' } } });
    await expectNothingAppended([extra.message, badPhone.message], waits);
  });

  it('422 message_purpose_required when the purpose is missing, message_purpose_not_allowed outside the list', async () => {
    const allowed = ['transactional', 'operational', 'support', 'internal_team', 'authentication'];
    const { message_purpose: _purpose, ...withoutPurpose } = body();
    expect(await send(withoutPurpose)).toEqual({
      status: 422,
      body: { success: false, error: 'message_purpose_required', message: 'message_purpose is required.', details: { field: 'message_purpose', allowed } },
    });
    const notAllowed = { status: 422, body: { success: false, error: 'message_purpose_not_allowed', message: 'This message purpose is not allowed.', details: { field: 'message_purpose', allowed } } };
    expect(await send(body({ message_purpose: 'marketing' }))).toEqual(notAllowed);
    // An empty purpose was not given: required, like a missing one.
    expect(await send(body({ message_purpose: '' }))).toEqual({
      status: 422,
      body: { success: false, error: 'message_purpose_required', message: 'message_purpose is required.', details: { field: 'message_purpose', allowed } },
    });
  });

  it('404 invalid_instance for an unknown instance and for another customer\'s, by id and by name', async () => {
    const waits = suite.fixture.replies.calls.length;
    const messages: string[] = [];
    for (const instanceId of ['ins_doesnotexist', other.instance_id, other.instance_name]) {
      const request = body({ instance_id: instanceId });
      messages.push(request.message);
      expect(await send(request)).toEqual({
        status: 404,
        body: { success: false, error: 'invalid_instance', message: 'No instance with this id or name belongs to your account.', details: { field: 'instance_id', value: instanceId } },
      });
    }
    await expectNothingAppended(messages, waits);
  });
});

describe('POST /api/send-message: Idempotency-Key', () => {
  const IdempotencyRow = z.object({ command_id: z.string(), message_id: z.string() });

  it('a retry answers as the first request did, waits on the same command (the store first) and appends nothing more', async () => {
    suite.fixture.replies.answerWith(delivered);
    const key = `order-${randomUUID()}`;
    const request = body();
    const first = await send(request, { headers: { 'idempotency-key': key } });
    const firstWait = lastWait();
    const second = await send(request, { headers: { 'idempotency-key': key } });
    const secondWait = lastWait();
    expect(first.status).toBe(200);
    expect(second).toEqual(first);
    expect(secondWait.commandId).toBe(firstWait.commandId);
    expect(firstWait.options).toEqual({ checkStoreFirst: false });
    expect(secondWait.options).toEqual({ checkStoreFirst: true });

    const stored = await suite.fixture.runtime.pool.one(
      sql.type(IdempotencyRow)`SELECT command_id, message_id FROM idempotency_records WHERE customer_id = ${account.customer_id} AND idempotency_key = ${key}`,
    );
    const record = await appended(firstWait.commandId);
    expect(stored).toEqual({ command_id: firstWait.commandId, message_id: record.command.message_id });
    expect(record.command).toMatchObject({ idempotency_key: key });
    await afterLaterSend();
    expect(commandsWhere((c) => c.correlation_id === firstWait.commandId)).toHaveLength(1);
  });

  it('the same key with a different request is refused: 422, nothing waited on or appended', async () => {
    suite.fixture.replies.answerWith(accepted);
    const key = `reused-${randomUUID()}`;
    expect((await send(body(), { headers: { 'idempotency-key': key } })).status).toBe(200);
    const waits = suite.fixture.replies.calls.length;
    const different = body();
    expect(await send(different, { headers: { 'idempotency-key': key } })).toEqual({
      status: 422,
      body: {
        success: false,
        error: 'validation_error',
        message: 'This Idempotency-Key was already used with a different request.',
        details: { field: 'Idempotency-Key', rule: 'reused_with_different_request' },
      },
    });
    await expectNothingAppended([different.message], waits);
  });

  it('keys are per customer: another customer\'s request with the same key is a new command', async () => {
    suite.fixture.replies.answerWith(accepted);
    const key = `shared-${randomUUID()}`;
    await send(body(), { headers: { 'idempotency-key': key } });
    const mine = lastWait().commandId;
    const theirs = await send(body({ instance_id: other.instance_id }), { key: other.api_key, headers: { 'idempotency-key': key } });
    expect(theirs.status).toBe(200);
    expect(lastWait().commandId).not.toBe(mine);
  });

  it('a retry of a command still undecided after IDEMPOTENT_REAPPEND_AFTER_MS appends it again, with the same ids', async () => {
    const app = await suite.fixture.build({ reappendAfterMs: 0 });
    try {
      suite.fixture.replies.answerWith(NO_ANSWER);
      const key = `lost-${randomUUID()}`;
      const request = body();
      const inject = () => app.inject({ method: 'POST', url: '/api/send-message', headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json', 'idempotency-key': key }, payload: request });
      const first = await inject();
      const commandId = lastWait().commandId;
      expect(first.statusCode).toBe(500);
      await new Promise((r) => setTimeout(r, 5));
      suite.fixture.replies.answerWith(accepted);
      const retry = await inject();
      expect(retry.statusCode).toBe(200);
      expect(lastWait().commandId).toBe(commandId);
      await until(() => commandsWhere((c) => c.correlation_id === commandId).length === 2, 15_000, 'the command appended again');
      const [original, again] = commandsWhere((c) => c.correlation_id === commandId);
      expect(again).toEqual({ ...original, event_id: again!.event_id, occurred_at: again!.occurred_at });
    } finally {
      await app.close();
    }
  });

  it('a retry of a command the policy has decided is not appended again, however old', async () => {
    const app = await suite.fixture.build({ reappendAfterMs: 0 });
    try {
      suite.fixture.replies.answerWith(NO_ANSWER);
      const key = `decided-${randomUUID()}`;
      const request = body();
      const inject = () => app.inject({ method: 'POST', url: '/api/send-message', headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json', 'idempotency-key': key }, payload: request });
      expect((await inject()).statusCode).toBe(500);
      const commandId = lastWait().commandId;
      const { command } = await appended(commandId);
      // The policy stage's decision, written as it writes it.
      await insertEntries(suite.fixture.runtime.pool, [decision(commandId, { customer_id: account.customer_id, instance_id: account.instance_id, message_id: command.message_id, log_id: 9001 })]);
      await new Promise((r) => setTimeout(r, 5));
      suite.fixture.replies.answerWith(accepted);
      expect((await inject()).statusCode).toBe(200);
      expect(lastWait()).toMatchObject({ commandId, options: { checkStoreFirst: true } });
      await afterLaterSend();
      expect(commandsWhere((c) => c.correlation_id === commandId)).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('422 validation_error for a malformed Idempotency-Key header', async () => {
    const waits = suite.fixture.replies.calls.length;
    for (const key of ['has space', 'x'.repeat(256)]) {
      expect(await send(body(), { headers: { 'idempotency-key': key } })).toMatchObject({
        status: 422,
        body: { success: false, error: 'validation_error', details: { field: 'Idempotency-Key', rule: 'pattern' } },
      });
    }
    expect(suite.fixture.replies.calls.length).toBe(waits);
  });
});
