// What the dashboard appends to Kafka, through the API's own producer: policy facts (a new
// customer's CustomerRegistered) and the audit trail of account changes (by: the signed-in user).
import { randomUUID } from 'node:crypto';
import { kafkaAuditTrail, type AccountChange, type AuditTrail, type FactAppender } from '@gw/accounts';
import type { EventCodec } from '@gw/events';
import type { KafkaClient } from '@gw/kafka';
import { appendFacts } from '@gw/policy-log';
import type { FastifyRequest } from 'fastify';
import { SECURITY_ACTIONS, securityLog } from './plugins/security-log.ts';
import { member } from './sessions/guards.ts';

export interface DashboardAppends {
  facts: FactAppender;
  audit: AuditTrail;
}

export function dashboardAppends(kafka: KafkaClient, codec: EventCodec): DashboardAppends {
  return {
    facts: { append: (fact) => appendFacts(kafka, codec, [fact], `dashboard_${randomUUID()}`) },
    audit: kafkaAuditTrail(kafka, codec),
  };
}

/** Records a change the signed-in member made, on their customer, by their email. */
export function recordChange(audit: AuditTrail, request: FastifyRequest, change: Omit<AccountChange, 'customerId' | 'by' | 'via'>): Promise<void> {
  const who = member(request);
  const event = SECURITY_ACTIONS[change.action];
  if (event) securityLog(request, event, { subjectId: change.subjectId, ...(change.details ? { details: change.details as Record<string, string> } : {}) });
  return audit.record({ ...change, customerId: who.customer_id, by: who.email, via: 'dashboard' });
}
