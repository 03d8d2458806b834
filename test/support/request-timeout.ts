// Every request a test makes ends within a time limit, with an error that names it. Without one, a
// request that never gets an answer shows only as the test's own timeout (two minutes in the e2e
// tier), with no hint of which call hung.

/** A fetch wrapped by withRequestTimeout, with its limit. */
export type LimitedFetch = typeof fetch & { requestTimeoutMs: number };

/** Wraps a fetch so that a request without a signal of its own is aborted after `ms`, naming the request. */
export function withRequestTimeout(fetchFn: typeof fetch, ms: number): LimitedFetch {
  const limited = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    if (init?.signal || input instanceof Request) return fetchFn(input, init);
    try {
      return await fetchFn(input, { ...init, signal: AbortSignal.timeout(ms) });
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError') throw error;
      throw new Error(`${init?.method ?? 'GET'} ${String(input)} gave no answer within ${ms} ms`, { cause: error });
    }
  };
  return Object.assign(limited, { requestTimeoutMs: ms }) as LimitedFetch;
}

/** The limit for the int and e2e tiers (setup file): TEST_REQUEST_TIMEOUT_MS, default 30 s. */
export const REQUEST_TIMEOUT_MS = Number(process.env.TEST_REQUEST_TIMEOUT_MS ?? 30_000);
