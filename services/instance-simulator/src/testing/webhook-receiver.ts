import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real local HTTP server that captures webhook posts, for int tests (here and in other
// services). It can be told to fail the next requests to exercise retries.

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** Status this receiver answered. */
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  /** Every request, failed ones included, in arrival order. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx only. */
  accepted(): ReceivedWebhook[];
  /** Answer the next `count` requests with `status` (default 500). */
  failNext(count: number, status?: number): void;
  /** Resolves with the accepted events matching `predicate` once there are `count` of them. */
  waitFor(predicate: (hook: ReceivedWebhook) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  const waiters = new Set<() => void>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      let status = 200;
      if (failures.remaining > 0) {
        failures.remaining -= 1;
        status = failures.status;
      }
      received.push({ path: request.url ?? '/', headers: request.headers, body, answered: status });
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: status < 300 }));
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const accepted = () => received.filter((hook) => hook.answered < 300);

  return {
    url: `http://127.0.0.1:${port}`,
    received,
    accepted,
    failNext(count, status = 500) {
      failures = { remaining: count, status };
    },
    waitFor(predicate, count = 1, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matches = accepted().filter(predicate);
          if (matches.length >= count) {
            cleanup();
            resolve(matches);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          const seen = received.map((hook) => `${hook.answered} ${(hook.body as { event?: string })?.event}`);
          reject(new Error(`webhook receiver: timed out waiting for ${count} matching event(s); saw ${JSON.stringify(seen)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
