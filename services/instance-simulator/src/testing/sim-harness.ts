import type { AddressInfo } from 'node:net';
import { buildSimulator } from '../simulator.ts';
import type { SimulatorOptions } from '../types.ts';

export const TEST_GLOBAL_KEY = 'test-global-key';

export interface Harness {
  baseUrl: string;
  globalKey: string;
  /** fetch with JSON body/response and the global key unless `apikey` is given (null: no header). */
  call(method: string, path: string, init?: { body?: unknown; apikey?: string | null }): Promise<CallResult>;
  close(): Promise<void>;
}

export interface CallResult {
  status: number;
  body: any;
  elapsedMs: number;
}

/** Starts a real simulator on an ephemeral port, for int tests (here and in other services). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Harness> {
  const globalKey = options.globalApiKey ?? TEST_GLOBAL_KEY;
  // Tests meet a manager set up from Evolution's .env.example (storage on) unless they say otherwise.
  const app = buildSimulator({ saveNewMessages: true, ...options, globalApiKey: globalKey });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    globalKey,
    async call(method, path, init = {}) {
      const headers: Record<string, string> = {};
      const apikey = init.apikey === undefined ? globalKey : init.apikey;
      if (apikey !== null) headers.apikey = apikey;
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      const started = performance.now();
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      });
      const text = await response.text();
      return {
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
        elapsedMs: performance.now() - started,
      };
    },
    // Requests under way are released and answered (preClose); a connection still open a second
    // later (one a client abandoned mid-request, e.g. a send the test timed out on) is cut, so
    // close() does not wait for the client's keep-alive to give up (it held a file for 70 s).
    close: async () => {
      const grace = setTimeout(() => app.server.closeAllConnections(), 1_000);
      try {
        await app.close();
      } finally {
        clearTimeout(grace);
      }
    },
  };
}

/** Creates an instance and pairs it, returning its token. */
export async function createOpenInstance(harness: Harness, instanceName: string): Promise<string> {
  const created = await harness.call('POST', '/instance/create', { body: { instanceName } });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const paired = await harness.call('POST', `/sim/instances/${instanceName}/pair`);
  if (paired.status !== 200) throw new Error(`pair failed: ${paired.status}`);
  return created.body.hash as string;
}
