import type { SendRequested } from '@gw/events';
import type { PolicyEvent } from '@gw/policy';

/** An authentication send, the n-th minute after `at`, to +1415555(1000+n). For tests. */
export function sendRequested(customerId: string, n: number, at: number, correlationId = `cmd_${customerId}_${n}`): SendRequested {
  return {
    event_id: `evt_${correlationId}_${n}`,
    correlation_id: correlationId,
    occurred_at: at + n * 60_000,
    customer_id: customerId,
    instance_id: 'ins_1',
    instance_name: 'main',
    message_id: `msg_${correlationId}`,
    phone: `+1415555${1000 + n}`,
    message: `Your code is ${100_000 + n}`,
    message_purpose: 'authentication',
    source: 'api',
    idempotency_key: null,
  };
}

/** A customer registered and on the scale plan for 30 days from `at`. For tests. */
export function onboarding(customerId: string, at: number): PolicyEvent[] {
  return [
    { type: 'CustomerRegistered', customerId, at },
    { type: 'PlanChanged', customerId, at, planId: 'scale', validUntil: at + 30 * 86_400_000, by: 'test', reason: 'test' },
  ];
}
