import type { ErrorCode } from '@gw/contract';
import type { PolicyConfig } from './config/policy-config.ts';
import type { CompiledContent } from './content/score-content.ts';
import type { EffectivePlan } from './limits.ts';
import type { InstanceState } from './instances.ts';
import type { CustomerPolicyState } from './state.ts';
import type { QuotaWindows } from './time/quota-windows.ts';

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
  /** Which module the send came through: the public API or the PBX integration. */
  source: 'api' | 'pbx';
}

/** Everything a rule may look at, computed once per command. */
export interface RuleContext {
  command: SendCommand;
  state: CustomerPolicyState;
  config: PolicyConfig;
  /** The content rules compiled (Policy.content). */
  content: CompiledContent;
  /** The customer's plan with overrides applied; null without a known plan. */
  plan: EffectivePlan | null;
  windows: QuotaWindows;
  /** normaliseText(command.text): what content rules match and the digest hashes. */
  normalised: string;
  /** messageDigest(command.text). */
  digest: string;
  /** The record of command.instanceId in state.instances: looked up once per decision, not by each rule. */
  instance: InstanceState | undefined;
}

export interface RuleVerdict {
  rule: string;
  outcome: 'pass' | 'fail';
  code?: ErrorCode;
  message?: string;
  details?: Record<string, unknown>;
}

/** One policy rule: a pure check plus what docs and the CLI say about it. */
export interface Rule {
  name: string;
  /** The error code it refuses with. */
  code: ErrorCode;
  summary: string;
  check(context: RuleContext): RuleVerdict;
}

export interface RuleRecord {
  rule: string;
  outcome: 'pass' | 'fail' | 'skipped';
  details: Record<string, unknown> | null;
}

export type PolicyDecision =
  | { decision: 'accepted'; rules: RuleRecord[] }
  | { decision: 'rejected'; code: ErrorCode; message: string; details: Record<string, unknown>; rules: RuleRecord[] };
