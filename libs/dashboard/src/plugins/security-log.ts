// The dashboard's security log: one structured line per event a security review or an incident
// responder looks for (sign-ins and their failures, lockouts, second-factor changes, role
// changes, API keys made and revoked, sign-ups, address verifications, password resets and
// changes, sessions ended, and every 401/403 refusal), each with `security: true` so
// a log pipeline can route them apart. Never a password, code, secret, email typed at sign-in,
// phone number or message text: ids, the route, the client address and the outcome only.
import type { FastifyRequest } from 'fastify';

export type SecurityEvent =
  | 'sign_in.succeeded'
  | 'sign_in.failed'
  | 'sign_in.locked'
  | 'account.locked_out'
  | 'second_factor.failed'
  | 'second_factor.enrolled'
  | 'second_factor.replaced'
  | 'member.role_changed'
  | 'member.invited'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'request.refused'
  | 'sign_up.started'
  | 'sign_up.address_taken'
  | 'email.verification_sent'
  | 'email.verified'
  | 'password.reset_requested'
  | 'password.reset'
  | 'password.changed'
  | 'password.change_failed'
  | 'session.ended';

export interface SecurityFields {
  userId?: string | null;
  customerId?: string | null;
  /** Why, in words of our own (never what was typed). */
  reason?: string;
  status?: number;
  subjectId?: string;
  details?: Record<string, string | number | boolean | null>;
}

/** Writes one security line through the request's logger (the API's pino logger; nothing when logging is off). */
export function securityLog(request: FastifyRequest, event: SecurityEvent, fields: SecurityFields = {}): void {
  const account = request.account ?? null;
  request.log.info(
    {
      security: true,
      event,
      user_id: fields.userId ?? account?.user_id ?? null,
      customer_id: fields.customerId ?? account?.customer_id ?? null,
      ...(fields.subjectId ? { subject_id: fields.subjectId } : {}),
      ...(fields.status ? { status: fields.status } : {}),
      ...(fields.reason ? { reason: fields.reason } : {}),
      ...(fields.details ? { details: fields.details } : {}),
      method: request.method,
      route: request.routeOptions?.url ?? null,
      ip: request.ip,
    },
    `security ${event}`,
  );
}

/** The audit actions that are also security events (recordChange writes both). */
export const SECURITY_ACTIONS: Partial<Record<string, SecurityEvent>> = {
  'member.role_changed': 'member.role_changed',
  'member.invited': 'member.invited',
  'api_key.created': 'api_key.created',
  'api_key.revoked': 'api_key.revoked',
};
