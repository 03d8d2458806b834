import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireGlobalKey } from '../auth.ts';
import { badRequest } from '../evolution-errors.ts';
import type { SimContext } from '../sim-context.ts';

// Evolution 2.4.0's licence gate (tag 2.4.0-rc2, src/licensing/runtime.ts `gateMiddleware`,
// mounted in src/main.ts before the business router): until the server is activated in its
// manager UI, every route outside the list below answers 503 LICENSE_REQUIRED, before any
// apikey or instance guard runs. `PUT /sim/license {"required": true|false}` switches it.

const DOCS_URL = 'https://docs.evolutionfoundation.com.br/licensing';

// The paths gateMiddleware always lets through (plus /sim: the simulator's own control plane).
const OPEN_PATHS = new Set(['/', '/health', '/server/ok', '/favicon.ico', '/license/status', '/license/register', '/license/activate', '/ws']);
const OPEN_PREFIXES = ['/manager', '/assets', '/store', '/sim'];
const STATIC_FILE = /\.(svg|css|js|png|ico|woff2?|ttf|map)$/i;

function passesGate(path: string): boolean {
  return OPEN_PATHS.has(path) || OPEN_PREFIXES.some((prefix) => path.startsWith(prefix)) || STATIC_FILE.test(path);
}

/** gateMiddleware's 503 body, field for field. */
export function licenseRequiredBody(request: FastifyRequest, instanceId: string) {
  const forwarded = request.headers['x-forwarded-proto'];
  const scheme = (Array.isArray(forwarded) ? forwarded[0] : forwarded) || request.protocol;
  const managerUrl = `${scheme}://${request.headers.host}/manager/login`;
  return {
    error: 'service not activated',
    code: 'LICENSE_REQUIRED',
    register_url: managerUrl,
    instance_id: instanceId,
    docs_url: DOCS_URL,
    message: `This Evolution API instance is not activated. Open ${managerUrl} to activate, or set AUTHENTICATION_API_KEY in your .env with a valid licensing key. Docs: ${DOCS_URL}`,
  };
}

/** Registers the gate (an onRequest hook, so unknown paths are gated too, as in express) and its /sim switch. */
export function registerLicenseGate(app: FastifyInstance, ctx: SimContext): void {
  let required = ctx.options.licenseRequired;
  // loadOrCreateInstanceID (src/licensing/store.ts): one id per server.
  const serverId = randomUUID();

  app.addHook('onRequest', async (request, reply) => {
    if (!required) return;
    const path = request.url.split('?')[0] ?? '/';
    if (passesGate(path)) return;
    return reply.code(503).send(licenseRequiredBody(request, serverId));
  });

  app.get('/sim/license', async (request) => {
    requireGlobalKey(ctx, request);
    return { required };
  });

  app.put<{ Body: { required?: unknown } | undefined }>('/sim/license', async (request) => {
    requireGlobalKey(ctx, request);
    const wanted = request.body?.required;
    if (typeof wanted !== 'boolean') throw badRequest('required must be true or false');
    required = wanted;
    return { required };
  });
}
