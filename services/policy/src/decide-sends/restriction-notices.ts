import { Counter, type Registry } from 'prom-client';
import { sql, z, type Queryable } from '@gw/db';
import { derivedEventId, type GatewayEventEmitted } from '@gw/events';
import type { InstanceRestricted } from '@gw/policy';
import { buildCustomerEvent } from '@gw/webhooks';

const InstanceName = z.object({ id: z.string(), name: z.string() });

/** The connection state the customer is told with a restriction: a ban-like close is a close; the other signals come while connected. */
const connectionStateOf = (signal: InstanceRestricted['signal']): string => (signal === 'banned' || signal === 'logged_out' ? 'close' : 'open');

/**
 * Tells the customer and the operator that the engine put an instance under restriction (issue 27):
 * an `instance.connection_updated` customer event with the restriction's fields (docs/decisions.md,
 * "The number guard tells the customer"), built by the one customer-event builder
 * (buildCustomerEvent, libs/webhooks, as the ingest's events are), and
 * gateway_instance_restrictions_total{signal} (the InstanceRestricted alert). The instance's
 * display name is read from the accounts' directory (`instances`, read-only), as delivery does.
 */
export class RestrictionNotices {
  readonly restrictions: Counter<'signal'>;

  constructor(registry: Registry) {
    this.restrictions = new Counter({
      name: 'gateway_instance_restrictions_total',
      help: 'Instances the policy engine put under restriction after a restriction signal of the chat network, by signal',
      labelNames: ['signal'],
      registers: [registry],
    });
  }

  /**
   * The customer events of these restrictions (`factEventId`: the PolicyEventEmitted record's id,
   * from which the customer event's id derives). A restriction whose body the contract refuses is
   * left out and reported in `refused` (never a stopped stage).
   */
  async customerEvents<T extends { event: InstanceRestricted; factEventId: string; correlationId: string }>(db: Queryable, restricted: T[]): Promise<{ records: Array<{ record: GatewayEventEmitted; source: T }>; refused: number }> {
    if (restricted.length === 0) return { records: [], refused: 0 };
    const ids = [...new Set(restricted.map(({ event }) => event.instanceId))];
    const rows = await db.any(sql.type(InstanceName)`SELECT id, name FROM instances WHERE id = ANY(${sql.array(ids, 'text')})`);
    const names = new Map(rows.map((r) => [r.id, r.name]));
    const records: Array<{ record: GatewayEventEmitted; source: T }> = [];
    let refused = 0;
    for (const source of restricted) {
      const { event, factEventId, correlationId } = source;
      this.restrictions.inc({ signal: event.signal });
      const origin = {
        eventId: derivedEventId(factEventId, 'gateway-event'),
        correlationId,
        occurredAt: event.at,
        customerId: event.customerId,
        instanceId: event.instanceId,
      };
      const built = buildCustomerEvent(origin, {
        event: 'instance.connection_updated',
        instance_id: event.instanceId,
        // An instance the directory no longer has (deleted since) is named by its id.
        instance_name: names.get(event.instanceId) ?? event.instanceId,
        timestamp: new Date(event.at),
        connection_state: connectionStateOf(event.signal),
        restriction: 'restricted',
        restricted_until: new Date(event.until).toISOString(),
        restriction_signal: event.signal,
      });
      if (built.kind === 'built') records.push({ record: built.record, source });
      else refused++;
    }
    return { records, refused };
  }
}
