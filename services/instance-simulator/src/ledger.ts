import type { LedgerEntry } from './types.ts';

/**
 * Every message the simulator accepted, in acceptance order. Tests read it to prove
 * a message went out exactly once, whatever the HTTP client saw.
 */
export class Ledger {
  private entries: LedgerEntry[] = [];

  record(entry: LedgerEntry): LedgerEntry {
    this.entries.push(entry);
    return entry;
  }

  list(instance?: string): LedgerEntry[] {
    return this.entries.filter((entry) => instance === undefined || entry.instance === instance);
  }

  clear(): void {
    this.entries = [];
  }
}
