import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver saw it: the raw body bytes, the headers and when it arrived. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, unknown>;
  at: number;
}

/** What the receiver answers: a status (and headers), after a delay; 'hang' never answers. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedWebhook[];
  /** Decides each answer; `n` counts this receiver's requests from 1. */
  answer: (request: ReceivedWebhook, n: number) => Answer;
  /** Stops listening (connections are refused) until start() opens the same port again. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on loopback for webhook tests and benchmarks. */
export async function startWebhookReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  let count = 0;
  let server: Server;
  let port = 0;
  const receiver: WebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${port}${path}`;
    },
    get port() {
      return port;
    },
    received,
    answer: () => ({ status: 200 }),
    stop: () => closeServer(),
    start: () => listen(port),
    close: () => closeServer(),
  };
  const handle: Parameters<typeof createServer>[1] = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        // kept as raw; the test asserts on it
      }
      const request: ReceivedWebhook = { path: req.url ?? '', headers: req.headers, raw, body, at: Date.now() };
      received.push(request);
      const answer = receiver.answer(request, ++count);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const send = () => res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      if (answer.delayMs) setTimeout(send, answer.delayMs);
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
  const closeServer = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(0);
  return receiver;
}
