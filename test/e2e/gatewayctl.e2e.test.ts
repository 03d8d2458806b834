import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCodec, Topics, type AccountChanged } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { baseConfig } from '../support/infra.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** Every AccountChanged of a customer on the stack's account-events topic so far, in order. */
async function accountChanges(customerId: string): Promise<AccountChanged[]> {
  const topics = new Topics(stack.isolation.topicPrefix, baseConfig.topicPartitions);
  const kafka = new KafkaInspector(baseConfig.kafkaBrokers, stack.isolation.topicPrefix);
  const codec = new EventCodec(baseConfig.schemaRegistryUrl, topics);
  const topic = topics.name('accountEvents');
  const changes: AccountChanged[] = [];
  await kafka.readToEnd(topic, {
    ends: await kafka.endOffsets(topic),
    onBatch: async (records) => {
      for (const record of records) {
        const event = await codec.decode(record);
        if (event?.type === 'AccountChanged' && event.payload.customer_id === customerId) changes.push(event.payload);
      }
    },
  });
  return changes.sort((a, b) => a.occurred_at - b.occurred_at);
}

describe('gatewayctl', () => {
  it('demo --json prints a ready account whose key sends a first message', async () => {
    const env = { ...stack.env, PUBLIC_BASE_URL: stack.apiUrl };
    const result = await gatewayctl(env, 'demo', '--json');
    expect(result.code, result.stderr).toBe(0);
    const demo = JSON.parse(result.stdout);
    expect(Object.keys(demo).sort()).toEqual(['api_key', 'base_url', 'customer_id', 'instance_id', 'instance_name', 'pbx_integration_id', 'pbx_secret']);
    expect(demo.base_url).toBe(stack.apiUrl);

    const sent = await send(demo.base_url, demo.api_key, {
      instance_id: demo.instance_id,
      phone: '+14155552671',
      message: 'first send from the demo',
      message_purpose: 'transactional',
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ success: true, status: 'sent', log_id: expect.any(Number) });
  });

  it('records each account change as an AccountChanged by the operator, never with a secret', async () => {
    const env = { ...stack.env, GATEWAY_OPERATOR: 'ops-alice' };
    const customer = JSON.parse((await gatewayctl(env, 'customer', 'create', '--name', 'Audit Co', '--json')).stdout);
    const key = JSON.parse((await gatewayctl(env, 'api-key', 'create', '--customer', customer.customer_id, '--name', 'billing', '--json')).stdout);
    expect((await gatewayctl(env, 'api-key', 'revoke', key.key_id, '--json')).code).toBe(0);
    const changes = await accountChanges(customer.customer_id);
    expect(changes.map((c) => [c.action, c.subject_id, c.by, c.via])).toEqual([
      ['customer.created', customer.customer_id, 'ops-alice', 'gatewayctl'],
      ['api_key.created', key.key_id, 'ops-alice', 'gatewayctl'],
      ['api_key.revoked', key.key_id, 'ops-alice', 'gatewayctl'],
    ]);
    expect(JSON.stringify(changes)).not.toContain(key.api_key.slice(20));
  });

  it('creates a customer, an instance and a key, revokes the key, and the API honours it', async () => {
    const env = stack.env;
    const customer = JSON.parse((await gatewayctl(env, 'customer', 'create', '--name', 'Acme Clinic', '--json')).stdout);
    expect(customer.customer_id).toMatch(/^cus_/);
    const instance = JSON.parse((await gatewayctl(env, 'instance', 'create', '--customer', customer.customer_id, '--name', 'front-desk', '--json')).stdout);
    expect(instance).toMatchObject({ instance_id: expect.stringMatching(/^ins_/), instance_name: 'front-desk' });
    const paired = await stack.simulator.call('POST', `/sim/instances/${instance.manager_instance}/pair`);
    expect(paired.status).toBe(200);
    const key = JSON.parse((await gatewayctl(env, 'api-key', 'create', '--customer', customer.customer_id, '--json')).stdout);
    expect(key.api_key).toMatch(/^gw_[0-9a-f]{16}_/);

    const body = { instance_id: 'front-desk', phone: '+14155552671', message: 'cli made this', message_purpose: 'support' };
    const noPlan = await send(stack.apiUrl, key.api_key, body);
    expect(noPlan.status).toBe(403);
    expect(noPlan.body.error).toBe('active_plan_required');
    const plan = await gatewayctl(env, 'customer', 'set-plan', '--customer', customer.customer_id, '--plan', 'starter', '--json');
    expect(JSON.parse(plan.stdout)).toMatchObject({ plan: 'starter', appended: ['PlanChanged'] });
    const sent = await send(stack.apiUrl, key.api_key, body);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);

    const listed = JSON.parse((await gatewayctl(env, 'api-key', 'list', '--customer', customer.customer_id, '--json')).stdout);
    expect(JSON.stringify(listed)).not.toContain(key.api_key.slice(20)); // the secret is never shown again
    const revoked = await gatewayctl(env, 'api-key', 'revoke', key.key_id, '--json');
    expect(revoked.code).toBe(0);
    const refused = await send(stack.apiUrl, key.api_key, body);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('revoked_api_key');
  });

  it('manages PBX integrations: create shows the secrets once, templates, rotation and disabling', async () => {
    const env = { ...stack.env, PUBLIC_BASE_URL: stack.apiUrl };
    const demo = JSON.parse((await gatewayctl(env, 'demo', '--json', '--pbx-hmac')).stdout);
    expect(demo).toMatchObject({ pbx_integration_id: expect.any(Number), pbx_secret: expect.stringMatching(/^pbx_/), pbx_signing_secret: expect.stringMatching(/^pbxsig_/) });
    const created = JSON.parse((await gatewayctl(env, 'pbx', 'create', '--customer', demo.customer_id, '--instance', demo.instance_id, '--json')).stdout);
    expect(created).toMatchObject({ pbx_integration_id: expect.any(Number), pbx_secret: expect.stringMatching(/^pbx_/), webhook_url: `${stack.apiUrl}/integrations/pbx/webhook/${created.pbx_integration_id}` });
    expect(created.pbx_signing_secret).toBeUndefined();
    const id = String(created.pbx_integration_id);
    const template = JSON.parse((await gatewayctl(env, 'pbx', 'templates', 'set', '--integration', id, '--event', 'voicemail', '--text', 'Thanks {customer_phone}, we got your voicemail.', '--disable', '--json')).stdout);
    expect(template.templates.voicemail).toBe('Thanks {customer_phone}, we got your voicemail.');
    expect(template.enabled_events).not.toContain('voicemail');
    const rotated = JSON.parse((await gatewayctl(env, 'pbx', 'rotate-secret', '--integration', id, '--json')).stdout);
    expect(rotated.pbx_secret).not.toBe(created.pbx_secret);
    const post = (secret: string) =>
      fetch(`${stack.apiUrl}/integrations/pbx/webhook/${id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': secret }, body: '{"event_type":"call_ended"}' });
    expect((await post(created.pbx_secret)).status).toBe(401);
    expect(JSON.parse((await gatewayctl(env, 'pbx', 'disable', '--integration', id, '--json')).stdout)).toEqual({ pbx_integration_id: Number(id), disabled: true });
    expect((await post(rotated.pbx_secret)).status).toBe(401);
  });

  it('drives the simulator (sim pair|disconnect|inbound|call) and reports instance status', async () => {
    const env = { ...stack.env, PUBLIC_BASE_URL: stack.apiUrl };
    const demo = JSON.parse((await gatewayctl(env, 'demo', '--json')).stdout);
    const status = async () => JSON.parse((await gatewayctl(env, 'instance', 'status', '--instance', demo.instance_name, '--json')).stdout);
    expect(await status()).toMatchObject({ instance_id: demo.instance_id, manager_state: 'open' });
    expect((await gatewayctl(env, 'sim', 'disconnect', '--instance', demo.instance_id, '--json')).code).toBe(0);
    expect((await status()).manager_state).toBe('close');
    expect((await gatewayctl(env, 'sim', 'pair', '--instance', demo.instance_id, '--json')).code).toBe(0);
    expect((await status()).manager_state).toBe('open');
    const inbound = await gatewayctl(env, 'sim', 'inbound', '--instance', demo.instance_id, '--from', '+14155550142', '--text', 'Is my order ready?', '--json');
    expect(inbound.code, inbound.stdout).toBe(0);
    const call = await gatewayctl(env, 'sim', 'call', '--instance', demo.instance_id, '--from', '+14155550142', '--missed', '--json');
    expect(call.code, call.stdout).toBe(0);
    const refused = await gatewayctl(env, 'sim', 'inbound', '--instance', 'no-such-instance', '--from', '+1415', '--text', 'x', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({ error: 'No instance no-such-instance.' });
  });

  it('lists the policy rules in evaluation order with the code and status each refuses with', async () => {
    const result = await gatewayctl(stack.env, 'policy-log', 'rules', '--json');
    expect(result.code).toBe(0);
    const rules = JSON.parse(result.stdout) as Array<{ order: number; name: string; code: string; status: number }>;
    expect(rules).toHaveLength(13);
    expect(rules[0]).toMatchObject({ order: 1, name: 'module_enabled', code: 'module_not_enabled', status: 403 });
    expect(rules.map((r) => r.order)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    // The number guard's rules (docs/policy.md "The number guard").
    expect(rules.filter((r) => r.name === 'instance_not_restricted' || r.name === 'first_contact_limit')).toMatchObject([{ order: 6, code: 'sending_throttled', status: 429 }, { order: 10, code: 'sending_throttled', status: 429 }]);
  });

  it('reports operator mistakes in one clear line with a non-zero exit', async () => {
    const result = await gatewayctl(stack.env, 'api-key', 'create', '--customer', 'cus_nope', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'No customer cus_nope.' });
    const duplicate = await gatewayctl(stack.env, 'customer', 'create', '--json');
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).not.toMatch(/\n\s+at /);
    // Every command answers through the one action wrapper, the compliance ones included.
    const badTime = await gatewayctl(stack.env, 'policy-log', 'export', '--from', 'yesterday', '--to', '2026-01-01T00:00:00Z', '--json');
    expect(badTime.code).toBe(1);
    expect(JSON.parse(badTime.stdout)).toEqual({ error: 'yesterday is not an ISO 8601 time (e.g. 2026-01-31T00:00:00Z).' });
    expect(badTime.stderr).not.toMatch(/\n\s+at /);
  });
});
