// "Verify my log" reads the gateway's topics whole and re-runs the decider on the API's own thread:
// one verification per customer at a time, and a few at most in one API process. The gate also
// keeps, per customer, when the running one started and what the last one found (its verdict and
// counts, not the report), for the status page (GET /policy-log/verify-report). Held in this API
// process only: another replica knows its own runs. Pure.

/** Verifications one API process runs at once, all customers together. */
export const MAX_VERIFICATIONS = 2;
/** Customers whose last result one process remembers (the oldest is forgotten first). */
export const REMEMBERED_RESULTS = 1000;

export type GateAnswer = 'go' | 'running' | 'busy';

/** What the status page shows of a finished verification. */
export interface VerifyOutcome {
  ok: boolean | null;
  /** When the check began (the report's checked_at), or when it failed. */
  at: Date;
  summary: string;
  entries: number | null;
  divergences: number | null;
}

export interface VerifyStatus {
  runningSince: Date | null;
  last: VerifyOutcome | null;
}

export class VerifyGate {
  private readonly running = new Map<string, Date>();
  private readonly results = new Map<string, VerifyOutcome>();

  constructor(private readonly max = MAX_VERIFICATIONS, private readonly remembered = REMEMBERED_RESULTS) {}

  /** 'go' (then call leave when done), 'running' (this customer's is under way) or 'busy' (the process is at its limit). */
  enter(customerId: string, now = new Date()): GateAnswer {
    if (this.running.has(customerId)) return 'running';
    if (this.running.size >= this.max) return 'busy';
    this.running.set(customerId, now);
    return 'go';
  }

  /** Ends the customer's run, keeping its outcome (none when it was cut short). */
  leave(customerId: string, outcome?: VerifyOutcome): void {
    this.running.delete(customerId);
    if (!outcome) return;
    this.results.delete(customerId);
    this.results.set(customerId, outcome);
    if (this.results.size > this.remembered) this.results.delete(this.results.keys().next().value!);
  }

  status(customerId: string): VerifyStatus {
    return { runningSince: this.running.get(customerId) ?? null, last: this.results.get(customerId) ?? null };
  }
}
