import CircuitBreaker from 'opossum';
import type { SendTextRequest, SendTextResult } from './send-text.ts';
import { sendText } from './send-text.ts';

export interface BreakerSettings {
  resetTimeoutMs: number;
  errorThresholdPercentage?: number;
  volumeThreshold?: number;
}

class ManagerDown extends Error {
  constructor(readonly result: SendTextResult) {
    super('manager down');
  }
}

/**
 * One circuit breaker per instance manager: when a manager is down, sends fail fast with
 * circuit_open instead of queueing behind timeouts. A refusal by the manager (e.g. unknown number)
 * is a healthy answer and does not count against it.
 */
export class ManagerBreakers {
  private readonly breakers = new Map<string, CircuitBreaker<[SendTextRequest], SendTextResult>>();

  constructor(private readonly settings: BreakerSettings) {}

  private breakerFor(managerUrl: string) {
    let breaker = this.breakers.get(managerUrl);
    if (!breaker) {
      breaker = new CircuitBreaker(
        async (req: SendTextRequest) => {
          const result = await sendText(req);
          const unhealthy = result.kind === 'ambiguous' || (result.kind === 'failed' && (result.reason === 'manager_unavailable' || result.reason === 'manager_error'));
          if (unhealthy) throw new ManagerDown(result);
          return result;
        },
        {
          timeout: false, // the HTTP client owns the timeout, so a slow call is never abandoned silently
          resetTimeout: this.settings.resetTimeoutMs,
          errorThresholdPercentage: this.settings.errorThresholdPercentage ?? 50,
          volumeThreshold: this.settings.volumeThreshold ?? 5,
        },
      );
      this.breakers.set(managerUrl, breaker);
    }
    return breaker;
  }

  async send(req: SendTextRequest): Promise<SendTextResult> {
    try {
      return await this.breakerFor(req.managerUrl).fire(req);
    } catch (error) {
      if (error instanceof ManagerDown) return error.result;
      if ((error as { code?: string }).code === 'EOPENBREAKER') {
        return { kind: 'failed', reason: 'circuit_open', detail: 'the instance manager is failing; sends fail fast until it recovers' };
      }
      return { kind: 'ambiguous', detail: 'unexpected error while sending' };
    }
  }

  isOpen(managerUrl: string): boolean {
    return this.breakers.get(managerUrl)?.opened ?? false;
  }

  /** How many managers' breakers are in each state (one breaker per manager URL; none until its first send). */
  states(): { open: number; halfOpen: number; closed: number } {
    const counts = { open: 0, halfOpen: 0, closed: 0 };
    for (const breaker of this.breakers.values()) {
      if (breaker.halfOpen) counts.halfOpen++;
      else if (breaker.opened) counts.open++;
      else counts.closed++;
    }
    return counts;
  }

  shutdown(): void {
    for (const breaker of this.breakers.values()) breaker.shutdown();
  }
}
