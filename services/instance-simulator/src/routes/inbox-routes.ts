import type { FastifyInstance } from 'fastify';

/** One request the inbox received, as a customer's receiver would see it. */
export interface InboxEntry {
  received_at: string;
  headers: Record<string, string>;
  /** The raw body exactly as received (what the signature covers). */
  raw_body: string;
}

const KEEP = 200;

/**
 * A stand-in for a customer's webhook receiver, for local runs and demos: POST
 * /sim/inbox/{name} keeps the request (the last 200 per name) and answers 200; GET lists them,
 * newest first. It checks nothing: verifying the signature is the reader's exercise (docs/webhooks.md).
 */
export function registerInboxRoutes(app: FastifyInstance): void {
  const inboxes = new Map<string, InboxEntry[]>();
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 512 * 1024 }, (_request, body, done) => done(null, body));
    scope.post<{ Params: { name: string } }>('/sim/inbox/:name', async (request) => {
      const entries = inboxes.get(request.params.name) ?? [];
      const headers = Object.fromEntries(
        Object.entries(request.headers)
          .filter(([name]) => name.startsWith('x-chat-gateway-') || name === 'content-type' || name === 'user-agent')
          .map(([name, value]) => [name, String(value)]),
      );
      entries.unshift({ received_at: new Date().toISOString(), headers, raw_body: String(request.body ?? '') });
      entries.length = Math.min(entries.length, KEEP);
      inboxes.set(request.params.name, entries);
      return { received: true };
    });
  });
  app.get<{ Params: { name: string } }>('/sim/inbox/:name', async (request) => inboxes.get(request.params.name) ?? []);
}
