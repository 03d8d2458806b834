import type { FastifyInstance } from 'fastify';
import { requireInstance, requireInstanceKey } from '../auth.ts';
import { EvolutionError } from '../evolution-errors.ts';
import { queryMessages } from '../message-query.ts';
import { validateMessageQuery } from '../message-query-validation.ts';
import type { SimContext } from '../sim-context.ts';
import { sleep } from '../sleep.ts';

// Evolution v2 POST /chat/findMessages/{instance} (chat.router.ts: the index.router guards,
// dataValidate with messageValidateSchema, then ChatController.fetchMessages → 200).
// It reads the database only, so it answers whatever the connection state.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function registerChatRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.post<{ Params: { instanceName?: string }; Body: unknown }>('/chat/findMessages/:instanceName', async (request, reply) => {
    const instance = requireInstance(ctx, request.params.instanceName);
    requireInstanceKey(ctx, request, instance);
    // dataValidate: Object.assign(new Query(), body); a body that is no object carries no `where`.
    const query = isObject(request.body) ? request.body : {};
    validateMessageQuery(query);

    const fault = ctx.faults.take(instance.instanceName, 'findMessages');
    if (fault?.mode === 'find_error_5xx') {
      throw new EvolutionError(500, 'Internal Server Error', 'Simulated failure (fault injection: find_error_5xx)');
    }
    const page = queryMessages(ctx.messages.rows(instance.instanceId), query);
    // The lookup is done, the answer comes too late for a caller with a shorter timeout.
    if (fault?.mode === 'find_timeout') await sleep(fault.delay_ms, ctx.shutdown);
    return reply.code(200).send(page);
  });
}
