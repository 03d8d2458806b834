// "Verify my log" reads the gateway's topics whole and re-runs the decider on the API's own thread:
// one verification per customer at a time, and a few at most in one API process. Pure.

/** Verifications one API process runs at once, all customers together. */
export const MAX_VERIFICATIONS = 2;

export type GateAnswer = 'go' | 'running' | 'busy';

export class VerifyGate {
  private readonly running = new Set<string>();

  constructor(private readonly max = MAX_VERIFICATIONS) {}

  /** 'go' (then call leave when done), 'running' (this customer's is under way) or 'busy' (the process is at its limit). */
  enter(customerId: string): GateAnswer {
    if (this.running.has(customerId)) return 'running';
    if (this.running.size >= this.max) return 'busy';
    this.running.add(customerId);
    return 'go';
  }

  leave(customerId: string): void {
    this.running.delete(customerId);
  }
}
