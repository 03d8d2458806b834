import type { ErrorCode } from '@gw/contract';
import type { BulkLimits, VelocityLimits } from './config/plans.ts';
import type { GuardEvent } from './guard/events.ts';

export type * from './guard/events.ts';

/**
 * Everything the policy state is folded from. Every member is plain JSON, carries the customer it
 * belongs to and `at` (epoch ms, the time the fact happened). The service appends them to the
 * customer's log; replaying that log through evolve rebuilds the state exactly.
 */
export type PolicyEvent =
  | CustomerRegistered
  | PlanChanged
  | ModuleToggled
  | LimitsOverridden
  | AllowedPurposesChanged
  | RecipientSuppressed
  | RecipientUnsuppressed
  | RecipientIdentityLinked
  | InstancePausedForReview
  | InstanceResumed
  | SendDecided
  | DeliveryOutcomeRecorded
  | GuardEvent;

export type PolicyEventType = PolicyEvent['type'];

interface Base {
  customerId: string;
  at: number;
}

/** What every policy event carries (the guard's events, in guard/events.ts, extend it too). */
export type { Base as PolicyEventBase };

export interface CustomerRegistered extends Base {
  type: 'CustomerRegistered';
}

export interface PlanChanged extends Base {
  type: 'PlanChanged';
  /** A key of config.plans, or null when the plan ends. */
  planId: string | null;
  /** Sends are refused from this instant on (exclusive upper bound). */
  validUntil: number | null;
  by: string;
  reason: string;
}

export type PolicyModule = 'api' | 'pbx';

export interface ModuleToggled extends Base {
  type: 'ModuleToggled';
  module: PolicyModule;
  enabled: boolean;
  by: string;
}

/**
 * Limits granted after manual review (spec 8). It replaces any earlier override as a whole; an
 * event with no limits withdraws it. Each given value wins over the plan's.
 */
export interface LimitsOverridden extends Base {
  type: 'LimitsOverridden';
  daily?: number;
  monthly?: number;
  velocity?: Partial<VelocityLimits>;
  bulk?: Partial<BulkLimits>;
  grantedBy: string;
  reason: string;
}

export interface AllowedPurposesChanged extends Base {
  type: 'AllowedPurposesChanged';
  /** null: customer-wide list; otherwise this instance's list (intersected with the customer's). */
  instanceId: string | null;
  purposes: string[];
}

export type SuppressionSource = 'manual' | 'opt_out';

export interface RecipientSuppressed extends Base {
  type: 'RecipientSuppressed';
  /**
   * Normalised to E.164 by evolve, or a canonical linked id (`<digits>@lid`) when the chat network
   * hid the sender's number (kept as given). Any other unparseable value is kept and matches nothing.
   */
  recipient: string;
  source: SuppressionSource;
  reason: string;
  by: string;
  /** For opt-outs: the instance the opt-out arrived on; it counts against that instance's quality. */
  instanceId?: string;
  /** For opt-outs by keyword: the inbound message (its inbound_messages id) that asked for it. */
  inboundMessageId?: string;
  /**
   * Set only on what the engine emits (react): this number's suppression carried over from the
   * linked id `linkedFrom` it is known to be. It counts nothing against quality (the linked id's did).
   */
  linkedFrom?: string;
}

export interface RecipientUnsuppressed extends Base {
  type: 'RecipientUnsuppressed';
  recipient: string;
  source: SuppressionSource;
  by: string;
  /** Why a manual suppression was lifted (the dashboard asks for one). */
  reason?: string;
  /** For opt-backs by keyword: the instance and the inbound message that asked for it. */
  instanceId?: string;
  inboundMessageId?: string;
  /** Set only on what the engine emits: lifted because `linkedFrom` (a number or linked id known to be the same person) was. */
  linkedFrom?: string;
}

/**
 * The chat network told us that linked id `lid` (canonical `<digits>@lid`) is the number `phone`
 * (E.164) on this instance. From then on a suppression of either covers both (docs/policy.md).
 */
export interface RecipientIdentityLinked extends Base {
  type: 'RecipientIdentityLinked';
  instanceId: string;
  lid: string;
  phone: string;
}

/** The quality signal figures at the moment of an automatic pause. */
export interface QualitySignal {
  signal: 'violation_rate' | 'opt_out_rate' | 'delivery_failure_rate';
  rate: number;
  count: number;
  volume: number;
  threshold: number;
  minVolume: number;
  crossed: boolean;
}

export interface InstancePausedForReview extends Base {
  type: 'InstancePausedForReview';
  instanceId: string;
  reason: string;
  /** 'auto' for the quality check, otherwise the operator's name. */
  by: string;
  signals?: QualitySignal[];
}

export interface InstanceResumed extends Base {
  type: 'InstanceResumed';
  instanceId: string;
  by: string;
  reason: string;
}

/**
 * What the decider emits for every command. Besides the outcome it records the figures it
 * computed with the config of the time (quota windows, bucket level), so evolve never needs the
 * config and a replay folds to the same state even after the config changed.
 */
export interface SendDecided extends Base {
  type: 'SendDecided';
  commandId: string;
  instanceId: string;
  /** E.164. */
  recipient: string;
  purpose: string;
  /** messageDigest(text): the policy log keeps the digest, never the body. */
  digest: string;
  decision: 'accepted' | 'rejected';
  errorCode: ErrorCode | null;
  /** details.reason of a policy_violation (e.g. 'bulk_campaign'), else null. */
  reason: string | null;
  /** Quota calendar windows the send counts in ('2026-11-22', '2026-11'). */
  quotaWindows: { day: string; month: string };
  /** The instance bucket level right after an accepted send; null when rejected. */
  tokensLeft: number | null;
  policyVersion: string;
}

export interface DeliveryOutcomeRecorded extends Base {
  type: 'DeliveryOutcomeRecorded';
  instanceId: string;
  recipient: string;
  delivered: boolean;
}
