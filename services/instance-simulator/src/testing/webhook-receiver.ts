import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real local HTTP server that captures webhook posts, for tests here and in other services
// (the Evolution webhooks of the simulator, the gateway's customer webhooks). Its answers can be
// scripted: fail the next requests, answer with any status and headers, or never answer; and it
// can stop listening and come back on the same port, as a receiver that goes down and recovers.

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body bytes exactly as received (what a signature covers). */
  raw: Buffer;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: any;
  /** When it arrived (epoch ms). */
  at: number;
  /** Status this receiver answered; null while it hangs. */
  answered: number | null;
}

/** What to answer: a status (with headers, body, delay), or 'hang' to never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface WebhookReceiver {
  /** The receiver's base URL, e.g. http://127.0.0.1:PORT (any path is accepted). */
  readonly url: string;
  /** Every request, failed ones included, in arrival order. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx only. */
  accepted(): ReceivedWebhook[];
  /** Decides each answer (`n` counts requests from 1); default 200, after any failNext. */
  answer: (request: ReceivedWebhook, n: number) => Answer;
  /** Answer the next `count` requests with `status` (default 500). */
  failNext(count: number, status?: number): void;
  /** Resolves with the accepted events matching `predicate` once there are `count` of them. */
  waitFor(predicate: (hook: ReceivedWebhook) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Stops listening (connections are refused) until start() listens on the same port again. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  let count = 0;
  let server: Server;
  let port = 0;

  const handle = (request: import('node:http').IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      const hook: ReceivedWebhook = { path: request.url ?? '/', headers: request.headers, raw, body, at: Date.now(), answered: null };
      received.push(hook);
      let answer: Answer;
      if (failures.remaining > 0) {
        failures.remaining -= 1;
        answer = { status: failures.status };
      } else answer = receiver.answer(hook, ++count);
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const { status, headers, delayMs, body: answerBody } = answer;
      const send = () => {
        hook.answered = status;
        response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(answerBody ?? JSON.stringify({ ok: status < 300 }));
        for (const wake of waiters) wake();
      };
      if (delayMs) setTimeout(send, delayMs);
      else send();
    });
  };
  const listen = (at: number) =>
    new Promise<void>((resolve, reject) => {
      server = createServer(handle);
      server.keepAliveTimeout = 60_000;
      server.once('error', reject);
      server.listen(at, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const accepted = () => received.filter((hook) => hook.answered !== null && hook.answered < 300);

  const receiver: WebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    received,
    accepted,
    answer: () => ({ status: 200 }),
    failNext(failCount, status = 500) {
      failures = { remaining: failCount, status };
    },
    waitFor(predicate, wanted = 1, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matches = accepted().filter(predicate);
          if (matches.length >= wanted) {
            cleanup();
            resolve(matches);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          const seen = received.map((hook) => `${hook.answered} ${(hook.body as { event?: string })?.event}`);
          reject(new Error(`webhook receiver: timed out waiting for ${wanted} matching event(s); saw ${JSON.stringify(seen)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    stop,
    start: () => listen(port),
    close: stop,
  };
  await listen(0);
  return receiver;
}
