/** Progress of a long-running compliance job, reported to a callback (benchmarks) or a terminal. */
export interface ProgressEvent {
  phase: string;
  done: number;
  /** Known total, when there is one. */
  total?: number;
}

export type ProgressCallback = (event: ProgressEvent) => void;

/**
 * Gives the event loop a turn every `every` calls: the passes decode and replay records in tight
 * loops, and a process that also answers requests (the API's "verify my log") must keep answering.
 */
export function yielder(every = 500): () => Promise<void> | undefined {
  let n = 0;
  return () => (++n % every === 0 ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined);
}
