// The number guard's projection (`instance_guard`, issue 27) for the tests of what reads it (the
// usage page, the instance pages, `gatewayctl instance restrictions`): rows written as the policy
// consumer writes them (its migration, 1700000003000, makes the table).
import { sql, type Queryable } from '@gw/db';

export interface GuardFixture {
  customerId: string;
  instanceId: string;
  firstConnectedAt?: number | null;
  ageDays?: number | null;
  allowance?: number | null;
  firstContacts?: number;
  left?: number | null;
  restrictedUntil?: number | null;
  signal?: string | null;
  signals?: number;
}

const at = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** Writes (or replaces) an instance's guard row. */
export async function writeGuard(db: Queryable, g: GuardFixture): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO instance_guard (customer_id, instance_id, first_connected_at, age_days, warm_up_allowance_today, first_contacts_today,
                                first_contacts_left_today, restricted_until, restriction_signal, restriction_signals, updated_at)
    VALUES (${g.customerId}, ${g.instanceId}, ${at(g.firstConnectedAt)}::timestamptz, ${g.ageDays ?? null}, ${g.allowance ?? null}, ${g.firstContacts ?? 0},
            ${g.left ?? null}, ${at(g.restrictedUntil)}::timestamptz, ${g.signal ?? null}, ${g.signals ?? 0}, now())
    ON CONFLICT (instance_id) DO UPDATE SET
      customer_id = EXCLUDED.customer_id, first_connected_at = EXCLUDED.first_connected_at, age_days = EXCLUDED.age_days,
      warm_up_allowance_today = EXCLUDED.warm_up_allowance_today, first_contacts_today = EXCLUDED.first_contacts_today,
      first_contacts_left_today = EXCLUDED.first_contacts_left_today, restricted_until = EXCLUDED.restricted_until,
      restriction_signal = EXCLUDED.restriction_signal, restriction_signals = EXCLUDED.restriction_signals, updated_at = EXCLUDED.updated_at`);
}
