// Setup file of the int and e2e tiers (vitest.config.ts): see request-timeout.ts.
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from './request-timeout.ts';

globalThis.fetch = withRequestTimeout(globalThis.fetch, REQUEST_TIMEOUT_MS);
