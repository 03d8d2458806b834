import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { qualityOf } from '@gw/policy';
import { readPolicyState } from '@gw/policy-log';
import { demoAccount } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';
import { readTopic } from '../support/topic-reader.ts';

// Retries of clients that did get, or never got, their answer: a retry of a decided command
// appends nothing and counts nothing again; a retry of one whose first request died between its
// claim and its append goes through.
const suite = useStack({ env: { IDEMPOTENT_REAPPEND_AFTER_MS: '300' } });

describe('retried requests', () => {
  it('an Idempotency-Key retry long after its command was decided re-appends nothing and counts the delivery once', async () => {
    const account = await demoAccount(suite.stack);
    const body = { instance_id: account.instance_id, phone: '+14155558901', message: 'Your table for two is confirmed.', message_purpose: 'transactional' };
    const first = await send(suite.stack.apiUrl, account.api_key, body, { 'idempotency-key': 'table-2-confirm' });
    expect(first.body.status).toBe('sent');
    for (let retry = 0; retry < 3; retry++) {
      await new Promise((r) => setTimeout(r, 500)); // past IDEMPOTENT_REAPPEND_AFTER_MS
      const again = await send(suite.stack.apiUrl, account.api_key, body, { 'idempotency-key': 'table-2-confirm' });
      expect(again.body).toEqual(first.body);
    }
    const commandId = await suite.db.oneFirst(sql.type(z.object({ command_id: z.string() }))`SELECT command_id FROM policy_log WHERE message_id = ${first.body.message_id}`);
    const events = await readTopic(suite.stack.env, 'customerEvents');
    expect(events.filter((e) => e.type === 'SendRequested' && e.payload.correlation_id === commandId)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'PolicyInputRecorded' && e.payload.correlation_id === commandId && e.payload.input_type === 'DeliveryOutcomeRecorded')).toHaveLength(1);
    // The policy state as the engine reads it (snapshot and tail): one delivery counted.
    const state = await readPolicyState(suite.db, account.customer_id);
    expect((qualityOf(state!.instances, account.instance_id) ?? []).reduce((n, bucket) => n + bucket.delivered, 0)).toBe(1);
  });

  it('a PBX event whose first request died between its claim and its append is appended by the retry', async () => {
    const account = await demoAccount(suite.stack);
    await until(async () => (await suite.db.query(sql.unsafe`SELECT 1 FROM policy_state WHERE customer_id = ${account.customer_id} AND (state->'modules'->>'pbx')::boolean`)).rowCount === 1, 10_000, 'the PBX module on');
    // What the dead request left: its claim, no response, nothing on Kafka.
    await suite.db.query(sql.typeAlias('void')`INSERT INTO pbx_requests (integration_id, dedupe_key, command_id, created_at) VALUES (${account.pbx_integration_id}, 'ext:orphan-1', 'cmd_orphan_1', now() - interval '10 seconds')`);
    const answer = await fetch(`${suite.stack.apiUrl}/integrations/pbx/webhook/${account.pbx_integration_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': account.pbx_secret },
      body: JSON.stringify({ event_type: 'outbound_message', to: '+14155558902', message_text: 'We called you back: ticket 51.', external_message_id: 'orphan-1' }),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await answer.json()).toMatchObject({ success: true, status: 'processed', message_id: expect.any(String) });
    const decided = await suite.db.query(sql.unsafe`SELECT 1 FROM policy_log WHERE command_id = ${'cmd_orphan_1'}`);
    expect(decided.rowCount).toBe(1);
  });
});
