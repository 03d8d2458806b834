import type { PolicyEventBase } from '../events.ts';

/**
 * The number guard's policy events (docs/policy.md, "Number guard"). The first four are facts the
 * instance-events ingest appends as PolicyInputRecorded (input_type = type); InstanceRestricted is
 * what the engine derives from a signal (react), published like the automatic pause.
 */
export type GuardEvent = InstanceConnected | ContactLearned | RestrictionSignalled | RestrictionLifted | InstanceRestricted;

/** The instance was seen connected (open) at `firstConnectedAt`; evolve keeps the earliest such time. */
export interface InstanceConnected extends PolicyEventBase {
  type: 'InstanceConnected';
  instanceId: string;
  firstConnectedAt: number;
}

/** `contact` (E.164 or `<digits>@lid`) wrote to the instance: from then on it is no first contact. */
export interface ContactLearned extends PolicyEventBase {
  type: 'ContactLearned';
  instanceId: string;
  contact: string;
}

export const RESTRICTION_SIGNALS = ['send_error', 'reachout_timelock', 'message_capping', 'banned', 'logged_out'] as const;
export type RestrictionSignal = (typeof RESTRICTION_SIGNALS)[number];

/**
 * Signals kept in the log but never acted on: a close 401 (`logged_out`) is also what the phone's
 * "log out of this device", a re-pairing and the manager's own logout produce, so alone it says
 * nothing about the number's standing (docs/decisions.md, "What counts as a signal").
 */
export const RECORDED_ONLY_SIGNALS: readonly RestrictionSignal[] = ['logged_out'];

/**
 * The chat network warned the instance: a rejected send (`send_error`: Evolution drops the code),
 * a reach-out time lock (463) or message capping (475) where the manager gives the code, or a
 * ban-like disconnect (`banned`: close 403; `logged_out`, close 401, is recorded only). `until`: the end time the
 * network gave, if any (epoch ms).
 */
export interface RestrictionSignalled extends PolicyEventBase {
  type: 'RestrictionSignalled';
  instanceId: string;
  signal: RestrictionSignal;
  code: string | null;
  until: number | null;
  messageId: string | null;
  recipient: string | null;
}

/** An operator (or the customer, after review) lifted the instance's restriction; its signal count starts afresh. */
export interface RestrictionLifted extends PolicyEventBase {
  type: 'RestrictionLifted';
  instanceId: string;
  by: string;
  reason: string;
}

/**
 * Engine-emitted after a RestrictionSignalled: the instance refuses first contacts until `until`.
 * `signals`: the signals counted in the configured window, this one included.
 */
export interface InstanceRestricted extends PolicyEventBase {
  type: 'InstanceRestricted';
  instanceId: string;
  signal: RestrictionSignal;
  until: number;
  signals: number;
}
