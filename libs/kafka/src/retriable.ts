// Kafka marks some answers retriable: a partition whose leader is being chosen or has just been
// created ("leader not available", "not the leader", "unknown topic or partition"), typically
// for a moment after a broker starts or a topic is made. Some kafkajs admin calls pass these
// straight to the caller; work that is safe to repeat is repeated here, a bounded number of times.

export interface Patience {
  attempts: number;
  /** The wait between attempts grows by 50 ms up to this. */
  maxDelayMs: number;
}

export const DEFAULT_PATIENCE: Patience = { attempts: 40, maxDelayMs: 1_000 };

export const isRetriable = (error: unknown) => (error as { retriable?: unknown } | null)?.retriable === true;

/** Runs `work` until it succeeds, repeating it after an error Kafka marks retriable. */
export async function retryRetriable<T>(work: () => Promise<T>, patience: Patience = DEFAULT_PATIENCE): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRetriable(error) || attempt >= patience.attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(patience.maxDelayMs, 50 * attempt)));
    }
  }
}
