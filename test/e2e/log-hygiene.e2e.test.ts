import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { demoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';
import type { StackServiceName } from '../support/stack.ts';
import { startWebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';

// The logs of a whole run, at debug level, read back: phone numbers appear only masked and
// message texts never, whatever path a message took (sent, refused, failed, resolved, inbound,
// opted out, flagged, PBX, webhooks, bad input). And no service prints the KafkaJS partitioner
// warning at start.
const SERVICES: StackServiceName[] = ['api', 'policy', 'delivery', 'instance-events', 'webhooks'];
const ENV = { LOG_LEVEL: 'debug', WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', DELIVERY_SEND_TIMEOUT_MS: '1000', DELIVERY_RESOLVE_AFTER_MS: '1500' };
const suite = useStack({ services: SERVICES, env: ENV });

// Numbers and words used nowhere else: any of them in a log line is a leak.
const PHONES = ['+14155557301', '+14155557302', '+14155557303', '+14155557304', '+14155557305', '+14155557306', '+19995557307'];
const TEXT = (word: string) => `Your zephyrquill ${word} is ready`;

describe('the logs of a run', () => {
  it('hold phone numbers only masked and never a message text; no partitioner warning', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const account = await demoAccount(suite.stack);
      const hook = await gatewayctl({ ...suite.stack.env, ...ENV }, '--json', 'webhook', 'set', '--instance', account.instance_id, '--url', `${receiver.url}/hooks`, '--events', 'all');
      expect(hook.code, hook.stderr).toBe(0);
      const manager = await suite.db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
      const body = (phone: string, message: string) => ({ instance_id: account.instance_id, phone, message, message_purpose: 'support' });

      expect((await send(suite.stack.apiUrl, account.api_key, body(PHONES[0]!, TEXT('alpha')))).body.status).toBe('sent');
      // Refused by the manager (a number not on the network): 502, logged as a failed delivery.
      expect((await send(suite.stack.apiUrl, account.api_key, body(PHONES[6]!, TEXT('bravo')))).status).toBe(502);
      // An answer that comes too late: the resolver finds it at the manager.
      await suite.stack.simulator.call('PUT', '/sim/faults', { body: { instance: manager, mode: 'timeout', delay_ms: 2_000, count: 1 } });
      expect((await send(suite.stack.apiUrl, account.api_key, body(PHONES[1]!, TEXT('charlie')))).body.status).toBe('sent');
      // Bad input carrying a phone and a text.
      expect((await send(suite.stack.apiUrl, account.api_key, body(PHONES[2]!, `${TEXT('delta')}\u0000`))).status).toBe(422);
      expect((await send(suite.stack.apiUrl, account.api_key, { ...body(PHONES[2]!, TEXT('echo')), extra: TEXT('foxtrot') })).status).toBe(422);
      // Inbound: a keyword opt-out, a free-text one (flagged), and a plain message.
      for (const [phone, text] of [[PHONES[3]!, 'STOP'], [PHONES[4]!, `please stop texting me ${TEXT('golf')}`], [PHONES[5]!, TEXT('hotel')]] as const) {
        await suite.stack.simulator.call('POST', `/sim/instances/${manager}/inbound`, { body: { from: phone, text } });
      }
      // PBX: a message sent from a call event.
      await until(async () => (await suite.db.query(sql.unsafe`SELECT 1 FROM policy_state WHERE customer_id = ${account.customer_id} AND (state->'modules'->>'pbx')::boolean`)).rowCount === 1, 10_000, 'the PBX module on');
      const pbx = await fetch(`${suite.stack.apiUrl}/integrations/pbx/webhook/${account.pbx_integration_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': account.pbx_secret },
        body: JSON.stringify({ event_type: 'outbound_message', to: PHONES[2], message_text: TEXT('india') }),
      });
      expect(pbx.status).toBe(200);
      // Everything has gone through every service: the opt-out and the sent messages reached the receiver.
      await until(async () => receiver.received.some((r) => r.body.event === 'recipient.opted_out') && receiver.received.filter((r) => r.body.event === 'message.sent').length >= 3, 30_000, 'webhooks of the run');
      await new Promise((r) => setTimeout(r, 1_000));

      const masked = /\+1\*{8}0[1-7]/;
      let maskedSeen = 0;
      for (const service of SERVICES) {
        const log = readFileSync(suite.stack.logFile(service), 'utf8');
        expect(log.length, `${service} wrote no log`).toBeGreaterThan(0);
        for (const phone of PHONES) expect(log, `${service} logged ${phone}`).not.toContain(phone.slice(-10));
        expect(log, `${service} logged a message text`).not.toMatch(/zephyrquill/);
        expect(log, `${service} printed the partitioner warning`).not.toMatch(/partitioner/i);
        maskedSeen += log.split('\n').filter((line) => masked.test(line)).length;
      }
      // Phones are logged, masked (e.g. the delivery refused by the manager, the opt-out).
      expect(maskedSeen).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });
});
