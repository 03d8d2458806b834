import type { FaultMode, FaultRule, FaultTarget } from './types.ts';

export const FAULT_MODES: readonly FaultMode[] = [
  'none',
  'unknown_number',
  'timeout',
  'error_5xx',
  'disconnect',
  'ack_error',
  'stall',
  'hang_unsent',
  'find_error_5xx',
  'find_timeout',
];
export const DEFAULT_TIMEOUT_DELAY_MS = 30_000;

export interface FaultInput {
  instance?: string;
  mode: FaultMode;
  count?: number;
  delay_ms?: number;
}

/** `find_*` modes act on /chat/findMessages, every other mode on /message/sendText. */
export function faultTarget(mode: FaultMode): FaultTarget {
  return mode.startsWith('find_') ? 'findMessages' : 'sendText';
}

/** The rules of one route: one per instance, plus one for all instances. */
class ScopedRules {
  private readonly perInstance = new Map<string, FaultRule>();
  private global: FaultRule | undefined;

  put(rule: FaultRule): void {
    if (rule.instance === undefined) this.global = rule;
    else this.perInstance.set(rule.instance, rule);
  }

  remove(instance: string | undefined): void {
    if (instance === undefined) this.global = undefined;
    else this.perInstance.delete(instance);
  }

  list(): FaultRule[] {
    return [...(this.global ? [this.global] : []), ...this.perInstance.values()];
  }

  take(instance: string): FaultRule | undefined {
    const rule = this.perInstance.get(instance) ?? this.global;
    if (!rule) return undefined;
    if (rule.remaining !== undefined) {
      rule.remaining -= 1;
      if (rule.remaining <= 0) this.remove(rule.instance);
    }
    return { ...rule };
  }
}

/**
 * Injected failures. Per route (sendText, findMessages) one rule per scope: a rule for an
 * instance, and one global rule for all instances; the instance rule wins. Setting mode
 * `none` removes the rules of that scope, for every route.
 */
export class FaultRegistry {
  private readonly byTarget: Record<FaultTarget, ScopedRules> = {
    sendText: new ScopedRules(),
    findMessages: new ScopedRules(),
  };

  set(input: FaultInput): FaultRule | undefined {
    if (input.mode === 'none') {
      for (const rules of Object.values(this.byTarget)) rules.remove(input.instance);
      return undefined;
    }
    const rule: FaultRule = {
      mode: input.mode,
      delay_ms: input.delay_ms ?? DEFAULT_TIMEOUT_DELAY_MS,
      ...(input.instance !== undefined ? { instance: input.instance } : {}),
      ...(input.count !== undefined ? { remaining: input.count } : {}),
    };
    this.byTarget[faultTarget(rule.mode)].put(rule);
    return rule;
  }

  list(): FaultRule[] {
    return [...this.byTarget.sendText.list(), ...this.byTarget.findMessages.list()];
  }

  clear(): void {
    for (const rules of Object.values(this.byTarget)) {
      for (const rule of rules.list()) rules.remove(rule.instance);
    }
  }

  /**
   * The fault the next call of `target` on `instance` must suffer, if any. Consumes one
   * unit of the rule's count, and drops the rule once exhausted.
   */
  take(instance: string, target: FaultTarget = 'sendText'): FaultRule | undefined {
    return this.byTarget[target].take(instance);
  }
}
