// Every instance route starts here: the id in the URL must name one of the signed-in member's
// customer's live instances. Another customer's id, a deleted or an unknown one answers the same
// 404, so a page never tells whether an id exists elsewhere.
import { getInstanceForCustomer, openManagedInstance, type InstanceSummary, type ManagedInstance } from '@gw/accounts';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import type { FastifyRequest } from 'fastify';
import { member, PageError } from './sessions/guards.ts';

export const NO_SUCH_INSTANCE = { title: 'No such instance', message: 'Your organisation has no instance with this id. It may have been deleted.' };

/** The member's instance by id, or null. */
export function findOwnInstance(pool: Pool, request: FastifyRequest, id: string): Promise<InstanceSummary | null> {
  return getInstanceForCustomer(pool, member(request).customer_id, id);
}

/** The member's instance by id; a 404 page otherwise. */
export async function ownInstance(pool: Pool, request: FastifyRequest, id: string): Promise<InstanceSummary> {
  const instance = await findOwnInstance(pool, request, id);
  if (!instance) throw new PageError(404, NO_SUCH_INSTANCE.title, NO_SUCH_INSTANCE.message, { href: '/instances', label: 'Your instances' });
  return instance;
}

/** The instance opened to call its manager (its apikey in the clear: never passed to a page). Only after ownInstance. */
export const openOwn = (pool: Pool, box: SecretBox, instance: InstanceSummary): Promise<ManagedInstance> => openManagedInstance(pool, box, instance.id);
