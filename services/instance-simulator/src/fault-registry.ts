import type { FaultMode, FaultRule } from './types.ts';

export const FAULT_MODES: readonly FaultMode[] = [
  'none',
  'unknown_number',
  'timeout',
  'error_5xx',
  'disconnect',
  'ack_error',
];
export const DEFAULT_TIMEOUT_DELAY_MS = 30_000;

export interface FaultInput {
  instance?: string;
  mode: FaultMode;
  count?: number;
  delay_ms?: number;
}

/**
 * Injected send failures. One rule per scope: a rule for an instance, and one global
 * rule for all instances; the instance rule wins. Setting mode `none` removes the rule.
 */
export class FaultRegistry {
  private readonly perInstance = new Map<string, FaultRule>();
  private global: FaultRule | undefined;

  set(input: FaultInput): FaultRule | undefined {
    if (input.mode === 'none') {
      if (input.instance === undefined) this.global = undefined;
      else this.perInstance.delete(input.instance);
      return undefined;
    }
    const rule: FaultRule = {
      mode: input.mode,
      delay_ms: input.delay_ms ?? DEFAULT_TIMEOUT_DELAY_MS,
      ...(input.instance !== undefined ? { instance: input.instance } : {}),
      ...(input.count !== undefined ? { remaining: input.count } : {}),
    };
    if (rule.instance === undefined) this.global = rule;
    else this.perInstance.set(rule.instance, rule);
    return rule;
  }

  list(): FaultRule[] {
    return [...(this.global ? [this.global] : []), ...this.perInstance.values()];
  }

  clear(): void {
    this.global = undefined;
    this.perInstance.clear();
  }

  /**
   * The fault the next send on `instance` must suffer, if any. Consumes one unit of
   * the rule's count, and drops the rule once exhausted.
   */
  take(instance: string): FaultRule | undefined {
    const rule = this.perInstance.get(instance) ?? this.global;
    if (!rule) return undefined;
    if (rule.remaining !== undefined) {
      rule.remaining -= 1;
      if (rule.remaining <= 0) {
        if (rule.instance === undefined) this.global = undefined;
        else this.perInstance.delete(rule.instance);
      }
    }
    return { ...rule };
  }
}
