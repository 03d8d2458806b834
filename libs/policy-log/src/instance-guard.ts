import { jsonOf, sql } from '@gw/db';
import { guardSummary, type CustomerPolicyState, type Policy, type PolicyEvent } from '@gw/policy';

/** One row of the instance_guard projection: the number guard of an instance in figures (guardSummary). */
export interface InstanceGuardRow {
  customer_id: string;
  instance_id: string;
  first_connected_at: number | null;
  age_days: number | null;
  warm_up_allowance_today: number | null;
  first_contacts_today: number;
  first_contacts_left_today: number | null;
  restricted_until: number | null;
  restriction_signal: string | null;
  restriction_signals: number;
  /** The time the figures are as of: the latest folded event of the instance (the command's clock, so a rebuild writes the same). */
  updated_at: number;
}

/** The instances a batch's folded events name, each with the time of its latest one. */
export class TouchedInstances {
  readonly byInstance = new Map<string, { customerId: string; at: number }>();

  add(event: PolicyEvent): void {
    const instanceId = 'instanceId' in event && typeof event.instanceId === 'string' ? event.instanceId : '';
    if (instanceId === '') return;
    const seen = this.byInstance.get(instanceId);
    if (!seen || seen.at < event.at) this.byInstance.set(instanceId, { customerId: event.customerId, at: event.at });
  }
}

/** The rows of the touched instances, from their customers' states after the batch. Pure. */
export function instanceGuardRows(touched: TouchedInstances, stateOf: (customerId: string) => CustomerPolicyState | undefined, policy: Policy): InstanceGuardRow[] {
  const rows: InstanceGuardRow[] = [];
  for (const [instanceId, { customerId, at }] of touched.byInstance) {
    const state = stateOf(customerId);
    if (!state) continue;
    const s = guardSummary(state, instanceId, at, policy);
    rows.push({
      customer_id: customerId,
      instance_id: instanceId,
      first_connected_at: s.firstConnectedAt,
      age_days: s.ageDays,
      warm_up_allowance_today: s.warmUpAllowanceToday,
      first_contacts_today: s.firstContactsToday,
      first_contacts_left_today: s.firstContactsLeftToday,
      restricted_until: s.restrictedUntil,
      restriction_signal: s.restrictionSignal,
      restriction_signals: s.signals,
      updated_at: at,
    });
  }
  return rows;
}

const ts = (column: string) => sql.fragment`CASE WHEN r.${sql.identifier([column])} IS NULL THEN NULL ELSE to_timestamp(r.${sql.identifier([column])} / 1000.0) END`;

/**
 * The upsert of the rows, for policy_apply_batch's statement (applyPolicyBatch puts it in a WITH):
 * written with the batch or not at all. A row older than the one stored (a batch written late by
 * a consumer that lost its partition) changes nothing.
 */
export function instanceGuardUpsert(rows: InstanceGuardRow[]): ReturnType<typeof sql.fragment> {
  return sql.fragment`
    INSERT INTO instance_guard (customer_id, instance_id, first_connected_at, age_days, warm_up_allowance_today, first_contacts_today,
                                first_contacts_left_today, restricted_until, restriction_signal, restriction_signals, updated_at)
    SELECT r.customer_id, r.instance_id, ${ts('first_connected_at')}, r.age_days, r.warm_up_allowance_today, r.first_contacts_today,
           r.first_contacts_left_today, ${ts('restricted_until')}, r.restriction_signal, r.restriction_signals, to_timestamp(r.updated_at / 1000.0)
      FROM json_to_recordset(${jsonOf(rows)}) AS r(customer_id text, instance_id text, first_connected_at float8, age_days int,
           warm_up_allowance_today int, first_contacts_today int, first_contacts_left_today int, restricted_until float8,
           restriction_signal text, restriction_signals int, updated_at float8)
    ON CONFLICT (instance_id) DO UPDATE SET
      customer_id = EXCLUDED.customer_id,
      first_connected_at = EXCLUDED.first_connected_at,
      age_days = EXCLUDED.age_days,
      warm_up_allowance_today = EXCLUDED.warm_up_allowance_today,
      first_contacts_today = EXCLUDED.first_contacts_today,
      first_contacts_left_today = EXCLUDED.first_contacts_left_today,
      restricted_until = EXCLUDED.restricted_until,
      restriction_signal = EXCLUDED.restriction_signal,
      restriction_signals = EXCLUDED.restriction_signals,
      updated_at = EXCLUDED.updated_at
    WHERE instance_guard.updated_at <= EXCLUDED.updated_at`;
}
