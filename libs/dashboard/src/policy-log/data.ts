// What /policy-log reads, always within one customer: the policy_log projection (written by the
// policy consumer), with the name of each entry's instance. The filter's WHERE condition is
// @gw/compliance's, the one its export uses, so a download holds exactly what the page listed.
import { policyLogWhere, type PolicyLogFilter } from '@gw/compliance';
import { sql, z, type Queryable } from '@gw/db';
import type { InstanceChoice } from './query.ts';

const Count = z.object({ n: z.number() });

export const ListRow = z.object({
  log_id: z.number(),
  message_id: z.string(),
  decided_at: z.date(),
  recipient: z.string(),
  message_purpose: z.string(),
  decision: z.enum(['accepted', 'rejected']),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  instance_id: z.string(),
  instance_name: z.string().nullable(),
  instance_deleted: z.boolean().nullable(),
  policy_version: z.string(),
});
export type ListRow = z.infer<typeof ListRow>;

/** The customer's entries matching the filter, newest first, one page. */
export async function listEntries(db: Queryable, customerId: string, filter: Omit<PolicyLogFilter, 'customerId'>, slice: { limit: number; offset: number }): Promise<readonly ListRow[]> {
  const where = policyLogWhere({ ...filter, customerId });
  return db.any(sql.type(ListRow)`
    SELECT p.log_id, p.message_id, p.decided_at, p.recipient, p.message_purpose, p.decision, p.error_code, p.error_message,
           p.instance_id, i.name AS instance_name, (i.deleted_at IS NOT NULL) AS instance_deleted, p.policy_version
      FROM (SELECT log_id, message_id, decided_at, recipient, message_purpose, decision, error_code, error_message, instance_id, policy_version, customer_id
              FROM policy_log
             WHERE ${where}
             ORDER BY decided_at DESC, log_id DESC
             LIMIT ${slice.limit} OFFSET ${slice.offset}) p
      LEFT JOIN instances i ON i.id = p.instance_id AND i.customer_id = p.customer_id
     ORDER BY p.decided_at DESC, p.log_id DESC`);
}

/** How many of the customer's entries match the filter. */
export async function countEntries(db: Queryable, customerId: string, filter: Omit<PolicyLogFilter, 'customerId'>): Promise<number> {
  return db.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log WHERE ${policyLogWhere({ ...filter, customerId })}`);
}

const Instance = z.object({ id: z.string(), name: z.string(), deleted: z.boolean() });

/** The customer's instances, deleted ones too (their entries stay in the log), for the instance filter. */
export async function instancesOf(db: Queryable, customerId: string): Promise<readonly InstanceChoice[]> {
  return db.any(sql.type(Instance)`SELECT id, name, (deleted_at IS NOT NULL) AS deleted FROM instances WHERE customer_id = ${customerId} ORDER BY deleted_at IS NOT NULL, name`);
}
