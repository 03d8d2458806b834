import type { ErrorCode } from '@gw/contract';

/** What the decider needs to know about one send; built from a SendRequested event. */
export interface SendCommand {
  commandId: string;
  customerId: string;
  instanceId: string;
  /** E.164, already normalised by the command endpoint. */
  recipient: string;
  purpose: string;
  text: string;
  /** The command's own time (epoch ms): the decider's clock, so replays decide the same. */
  occurredAt: number;
}

/** The fold of every prior policy input of a customer. Grows with the policy engine. */
export interface PolicyState {
  version: number;
}

export interface RuleVerdict {
  rule: string;
  outcome: 'pass' | 'fail';
  code?: ErrorCode;
  message?: string;
  details?: Record<string, unknown>;
}

export type Rule = (command: SendCommand, state: PolicyState) => RuleVerdict;

export interface RuleRecord {
  rule: string;
  outcome: 'pass' | 'fail' | 'skipped';
  details: Record<string, unknown> | null;
}

export type PolicyDecision =
  | { decision: 'accepted'; rules: RuleRecord[] }
  | { decision: 'rejected'; code: ErrorCode; message: string; details: Record<string, unknown>; rules: RuleRecord[] };
