// gatewayctl's account changes in the audit trail (AccountChanged, by: the operator), as the
// dashboard records its own. A command names the thing it changes (an instance, a PBX
// integration, a key, a delivery); the customer it belongs to is looked up here.
import type { AccountChange, AuditTrail } from '@gw/accounts';
import { sql, z, type Pool } from '@gw/db';
import { operator } from './policy/commands.ts';

export type Subject = { instanceId: string } | { pbxId: number } | { keyId: string } | { deliveryId: string } | { customerId: string };
export type OperatorChange = Omit<AccountChange, 'customerId' | 'instanceId' | 'by' | 'via'>;
export type Audit = (subject: Subject, change: OperatorChange) => Promise<void>;

const Owner = z.object({ customer_id: z.string(), instance_id: z.string().nullable() });

async function ownerOf(pool: Pool, subject: Subject) {
  if ('customerId' in subject) return { customer_id: subject.customerId, instance_id: null };
  if ('instanceId' in subject) return pool.maybeOne(sql.type(Owner)`SELECT customer_id, id AS instance_id FROM instances WHERE id = ${subject.instanceId}`);
  if ('pbxId' in subject) return pool.maybeOne(sql.type(Owner)`SELECT customer_id, instance_id FROM pbx_integrations WHERE id = ${subject.pbxId}`);
  if ('keyId' in subject) return pool.maybeOne(sql.type(Owner)`SELECT customer_id, NULL::text AS instance_id FROM api_keys WHERE id = ${subject.keyId}`);
  return pool.maybeOne(sql.type(Owner)`SELECT customer_id, instance_id FROM webhook_deliveries WHERE delivery_id = ${subject.deliveryId}`);
}

/** Records a change made by the operator (GATEWAY_OPERATOR or USER), once it has been made. */
export function operatorAudit(trail: AuditTrail, db: () => Promise<Pool>): Audit {
  return async (subject, change) => {
    const owner = await ownerOf(await db(), subject);
    if (!owner) return; // the command itself refused an unknown subject before this
    await trail.record({ ...change, customerId: owner.customer_id, ...(owner.instance_id ? { instanceId: owner.instance_id } : {}), by: operator(undefined), via: 'gatewayctl' });
  };
}
