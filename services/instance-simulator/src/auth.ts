import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { badRequest, notFound, unauthorized } from './evolution-errors.ts';
import type { SimContext } from './sim-context.ts';
import type { SimInstance } from './types.ts';

// Mirrors Evolution's guards (src/api/guards/*.guard.ts) and their order in
// index.router.ts: instance existence first, then the apikey. So an unknown
// instance answers 404 even to a wrong key, as the real server does.

function sameSecret(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.apikey;
  const key = Array.isArray(header) ? header[0] : header;
  return key ? key : undefined;
}

export function isGlobalKey(ctx: SimContext, key: string | undefined): boolean {
  return key !== undefined && sameSecret(key, ctx.options.globalApiKey);
}

/** instanceExistsGuard: 400 without a name, 404 for an unknown one. */
export function requireInstance(ctx: SimContext, name: string | undefined): SimInstance {
  if (!name) throw badRequest('"instanceName" not provided.');
  const instance = ctx.store.get(name);
  if (!instance) throw notFound(`The "${name}" instance does not exist`);
  return instance;
}

/** authGuard.apikey on an instance route: the global key or that instance's own token. */
export function requireInstanceKey(ctx: SimContext, request: FastifyRequest, instance: SimInstance): void {
  const key = apiKeyOf(request);
  if (!key) throw unauthorized();
  if (isGlobalKey(ctx, key)) return;
  if (sameSecret(key, instance.token)) return;
  throw unauthorized();
}

/** Routes without an instance (create, the /sim control plane) need the global key. */
export function requireGlobalKey(ctx: SimContext, request: FastifyRequest): void {
  if (!isGlobalKey(ctx, apiKeyOf(request))) throw unauthorized();
}
