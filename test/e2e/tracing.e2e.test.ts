import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { until } from '../support/suite.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';

// One send is one trace: the API's request, the policy decision, the delivery and its call to
// the instance manager, the outcome mapped to a customer event, and the webhook posted to the
// customer, every service exporting its spans over OTLP/HTTP to a local receiver.

const PHONE = '+14155552671';
const TEXT = 'Tracing check: your parcel 58213 is on its way.';
const ENV = {
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_POLL_MS: '100',
  // Spans are exported within a tenth of a second of ending, instead of OTel's five.
  OTEL_BSP_SCHEDULE_DELAY: '100',
};

let otlp: OtlpReceiver;
let stack: Stack;
let hooks: WebhookReceiver;
let account: DemoAccount;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  stack = await startStack(['api', 'policy', 'delivery', 'instance-events', 'webhooks'], { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
  hooks = await startWebhookReceiver();
  account = await demoAccount(stack);
  const set = await gatewayctl(stack.env, '--json', 'webhook', 'set', '--instance', account.instance_id, '--url', `${hooks.url}/hooks`, '--events', 'message.sent');
  expect(set.code, set.stdout + set.stderr).toBe(0);
});

afterAll(async () => {
  await stack?.stop();
  await hooks?.close();
  await otlp?.close();
});

const TOPIC = (name: string) => `${stack.env.TOPIC_PREFIX}${name}`;
const consumerOf = (spans: ReceivedSpan[], service: string, topic: string) =>
  spans.filter((s) => s.service === service && s.kind === SPAN_KIND.consumer && s.attributes['messaging.destination.name'] === TOPIC(topic));

describe('traces across the Kafka hops', () => {
  it('gives the spans of one send one trace, from the API request to the webhook post, with every parent in it', async () => {
    const result = await send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: PHONE, message: TEXT, message_purpose: 'transactional' });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const messageId: string = result.body.message_id;
    await hooks.waitFor((h) => h.body.event === 'message.sent' && h.body.message_id === messageId, 1, 20_000);

    // The trace is the one whose append carried this message; it is complete once the webhook post's span is in.
    let traceId = '';
    let spans: ReceivedSpan[] = [];
    await until(
      async () => {
        traceId = otlp.spans.find((s) => s.kind === SPAN_KIND.producer && s.attributes['gateway.message_id'] === messageId)?.traceId ?? '';
        spans = otlp.spans.filter((s) => s.traceId === traceId);
        return traceId !== '' && spans.some((s) => s.service === 'webhooks' && s.kind === SPAN_KIND.client);
      },
      20_000,
      'the spans of the send, up to the webhook post, at the OTLP receiver',
    );
    expect(otlp.refused).toEqual([]);

    // Every service's part is in this one trace.
    const server = spans.filter((s) => s.service === 'api' && s.kind === SPAN_KIND.server);
    expect(server.map((s) => s.name)).toEqual(['POST /api/send-message']);
    expect(server[0]!.attributes).toMatchObject({ 'http.route': '/api/send-message', 'http.response.status_code': 200 });
    const append = spans.find((s) => s.service === 'api' && s.kind === SPAN_KIND.producer)!;
    expect(append.attributes['messaging.destination.name']).toBe(TOPIC('customer-events.v1'));
    const decided = consumerOf(spans, 'policy', 'customer-events.v1').find((s) => s.attributes['gateway.message_id'] === messageId);
    expect(decided?.attributes['gateway.outcome']).toBe('accepted');
    const delivered = consumerOf(spans, 'delivery', 'policy-decisions.v1');
    expect(delivered).toHaveLength(1);
    const managerCall = spans.filter((s) => s.service === 'delivery' && s.kind === SPAN_KIND.client);
    expect(managerCall.map((s) => s.name)).toEqual(['POST /message/sendText/{instance}']);
    expect(managerCall[0]!.attributes['server.port']).toBe(Number(new URL(stack.simulator.baseUrl).port));
    const mapped = consumerOf(spans, 'instance-events', 'delivery-events.v1');
    expect(mapped).toHaveLength(1);
    const enqueued = consumerOf(spans, 'webhooks', 'gateway-events.v1');
    expect(enqueued).toHaveLength(1);
    const post = spans.filter((s) => s.service === 'webhooks' && s.kind === SPAN_KIND.client);
    expect(post).toHaveLength(1);
    expect(post[0]!.attributes).toMatchObject({ 'http.request.method': 'POST', 'gateway.webhook.event': 'message.sent', 'http.response.status_code': 200 });

    // Parent and child: one root (the request), every other span's parent in the trace.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    expect(spans.filter((s) => s.parentSpanId === '')).toEqual([server[0]]);
    for (const span of spans) if (span !== server[0]) expect(byId.has(span.parentSpanId), `${span.service} ${span.name} has its parent in the trace`).toBe(true);
    expect(append.parentSpanId).toBe(server[0]!.spanId);
    expect(decided!.parentSpanId).toBe(append.spanId);
    expect(delivered[0]!.parentSpanId).toBe(decided!.spanId);
    expect(managerCall[0]!.parentSpanId).toBe(delivered[0]!.spanId);
    expect(mapped[0]!.parentSpanId).toBe(delivered[0]!.spanId);
    expect(enqueued[0]!.parentSpanId).toBe(mapped[0]!.spanId);
    // The webhook post continues the enqueue span through the row it waited in (trace_parent).
    expect(post[0]!.parentSpanId).toBe(enqueued[0]!.spanId);

    // Nothing exported, by any service, names the recipient or quotes the text.
    const exported = JSON.stringify(otlp.spans.map((s) => [s.name, s.attributes, s.events]));
    expect(exported).not.toContain(PHONE.slice(1));
    expect(exported).not.toContain(TEXT);
  });
});
