// `gatewayctl instance restrictions`: the instances the number guard (issue 27) holds back from
// new contacts now, read from `instance_guard` (the policy consumer's projection, which the
// dashboard's usage page reads too): whose, which, the chat network's signal that restricted it,
// until when, and how many signals it has had. Lifting one is `instance lift-restriction`
// (policy/commands.ts: a RestrictionLifted fact).
import { sql, z, type Queryable } from '@gw/db';

const Restricted = z.object({
  customer_id: z.string(),
  instance_id: z.string(),
  name: z.string().nullable(),
  restriction_signal: z.string().nullable(),
  restricted_until: z.date(),
  restriction_signals: z.number(),
});

/** The instances restricted at `now`, soonest end first; only one customer's with `customerId`. */
export async function listRestrictions(pool: Queryable, filter: { customerId?: string; now?: number } = {}) {
  const at = new Date(filter.now ?? Date.now()).toISOString();
  const customer = filter.customerId === undefined ? sql.fragment`` : sql.fragment`AND g.customer_id = ${filter.customerId}`;
  const rows = await pool.any(sql.type(Restricted)`
    SELECT g.customer_id, g.instance_id, i.name, g.restriction_signal, g.restricted_until, g.restriction_signals
      FROM instance_guard g LEFT JOIN instances i ON i.id = g.instance_id
     WHERE g.restricted_until > ${at}::timestamptz ${customer}
     ORDER BY g.restricted_until, g.instance_id`);
  return rows.map((r) => ({
    customer_id: r.customer_id,
    instance_id: r.instance_id,
    name: r.name,
    signal: r.restriction_signal,
    until: r.restricted_until.toISOString(),
    signals: r.restriction_signals,
  }));
}
