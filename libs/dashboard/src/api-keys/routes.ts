// API keys: the customer's keys (never their secrets), creating one (a TOTP code again, in the
// same form; the key is in that one answer only) and revoking one. Every key is found within the
// signed-in member's customer: another customer's key id answers 404 like an unknown one.
import { AccountError, createApiKey, listApiKeys, revokeApiKey } from '@gw/accounts';
import { mails } from '@gw/mail';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordChange } from '../appends.ts';
import { STEP_UP_REFUSED, stepUpPasses } from '../mfa/step-up.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { form, text } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';
import type { ApiKeysPage } from './pages.ts';

export const KEY_NAME_MAX = 64;
/** A name for people: any printable text (no control characters), at most KEY_NAME_MAX. */
const KEY_NAME = new RegExp(`^[^\\p{Cc}\\p{Cs}]{1,${KEY_NAME_MAX}}$`, 'u');

const NO_SUCH_KEY = { title: 'No such API key', message: 'Your organisation has no API key with this id.' };

export async function apiKeyRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const page = async (request: FastifyRequest, extra: Partial<ApiKeysPage> = {}): Promise<ApiKeysPage> => {
    const me = member(request);
    const done = (request.query as { done?: string } | undefined)?.done;
    return {
      title: 'API keys',
      keys: await listApiKeys(deps.pool, me.customer_id),
      canManage: can(me.role, 'api_keys.manage'),
      nameMax: KEY_NAME_MAX,
      name: '',
      created: null,
      error: null,
      notice: done === 'revoked' ? 'The key was revoked. Requests with it are refused from now on.' : null,
      ...extra,
    };
  };

  app.get('/api-keys', { preHandler: requirePermission('dashboard.view') }, async (request, reply) => reply.page('api-keys/api-keys', await page(request)));

  app.post<{ Body: { name?: string; code?: string } }>(
    '/api-keys',
    {
      preHandler: requirePermission('api_keys.manage'),
      schema: form({ name: text(400), code: text(40) }),
      attachValidation: true,
      config: { rateLimit: { max: deps.settings.signInPerMinute, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.account?.user_id ?? request.ip } },
    },
    async (request, reply) => {
      const name = (request.body?.name ?? '').trim();
      const again = async (error: string) => reply.code(400).page('api-keys/api-keys', await page(request, { name, error }));
      if (request.validationError || !KEY_NAME.test(name)) return again(`Give the key a name (at most ${KEY_NAME_MAX} characters), e.g. the system that will use it.`);
      if (!(await stepUpPasses(deps.pool, deps.box, member(request), request.body?.code))) return again(STEP_UP_REFUSED);
      const created = await createApiKey(deps.pool, member(request).customer_id, name);
      await recordChange(deps.appends.audit, request, { action: 'api_key.created', subjectId: created.key_id, details: { name } });
      const me = member(request);
      deps.mailer.deliver(me.email, mails.apiKeyCreated(me.customer_name ?? 'your organisation', name, created.key_id));
      // The key is in this answer only (no-store, like every page); the list never shows it again.
      return reply.page('api-keys/api-keys', await page(request, { created: { key_id: created.key_id, name, api_key: created.api_key } }));
    },
  );

  app.post<{ Params: { keyId: string } }>(
    '/api-keys/:keyId/revoke',
    { preHandler: requirePermission('api_keys.manage'), schema: form({}) },
    async (request, reply) => {
      const keyId = request.params.keyId;
      try {
        await revokeApiKey(deps.pool, keyId, { customerId: member(request).customer_id });
      } catch (error) {
        if (error instanceof AccountError && error.code === 'not_found') throw new PageError(404, NO_SUCH_KEY.title, NO_SUCH_KEY.message, { href: '/api-keys', label: 'Your API keys' });
        throw error;
      }
      await recordChange(deps.appends.audit, request, { action: 'api_key.revoked', subjectId: keyId });
      return reply.redirect('/api-keys?done=revoked', 303);
    },
  );
}
