import { createHash } from 'node:crypto';
import { sql } from '@gw/db';
import type { InstanceEventReceived, PolicyFactRecord } from '@gw/events';
import type { OutgoingRecord } from '@gw/kafka';
import { envelopeProblem, JidParseCache, withoutBinaryFields } from '@gw/evolution';
import { maskPhone } from '@gw/observability';
import type { PolicyEvent } from '@gw/policy';
import { toFactRecord } from '@gw/policy-log';
import type { Runtime, StageHandler } from '@gw/runtime';
import { buildCustomerEvent } from '@gw/webhooks';
import { guardFacts } from './guard-facts.ts';
import { mapInstanceEvent, type GatewayEvent, type Mapped } from './map-event.ts';
import { acceptedCalls, recordCalls, saveConnection, saveInbound, saveLidLinks, saveReceipts, sentMessage, type SendFacts } from './store.ts';

/** A stable id for the n-th output of a source event: a redelivered batch yields the same ids. */
function derivedId(sourceEventId: string, index: number): string {
  const hex = createHash('sha256').update(`${sourceEventId}:${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** An opt-out or opt-back fact, naming the inbound message (its inbound_messages id) that asked for it. */
function optFact(received: InstanceEventReceived, fact: Mapped['facts'][number], inboundMessageId: string): PolicyEvent {
  const base = { customerId: received.customer_id, at: received.occurred_at, recipient: fact.recipient, source: 'opt_out' as const, reason: `keyword:${fact.keyword}`, by: 'recipient', instanceId: received.instance_id, inboundMessageId };
  return fact.kind === 'suppress' ? { ...base, type: 'RecipientSuppressed' } : { ...base, type: 'RecipientUnsuppressed' };
}

/** The chat network showed that linked id `lid` is the number `phone` on this instance (the policy folds it). */
function linkFact(received: InstanceEventReceived, link: Mapped['links'][number]): PolicyEvent {
  return { type: 'RecipientIdentityLinked', customerId: received.customer_id, at: received.occurred_at, instanceId: received.instance_id, lid: link.lid, phone: link.phone };
}

/**
 * Maps each instance event of a partition's batch to gateway events (gateway-events) and policy
 * facts (customer-events, where the policy engine folds them in order with the sends: opt-outs,
 * identity links and the number guard's facts), and keeps
 * the connection and call projections. Outputs carry ids derived from the source event, and the
 * projections are idempotent, so a redelivered batch changes nothing.
 */
export function handleInstanceEvents(runtime: Runtime): StageHandler<'InstanceEventReceived'> {
  const { codec, pool, logger, metrics, config } = runtime;
  const group = runtime.topics.group('instance-events');
  // This stage's numbers parsed from JIDs: a recipient comes back in every status of a send and
  // every message of a conversation, and is checked, then mapped, in each.
  const jids = new JidParseCache();
  /**
   * A manager's ERROR report names only the provider id: the message.failed names our message, its
   * recipient and purpose from this stage's own projection of our sends. Null: not a message we
   * sent, which the contract's message.failed (a send of ours) cannot describe; its
   * message.status_updated (status failed) still goes.
   */
  const withOurSend = async (gatewayEvent: GatewayEvent, sendOf: (providerMessageId: string) => Promise<SendFacts | null>): Promise<GatewayEvent['fields'] | null> => {
    const { event, fields } = gatewayEvent;
    if (event !== 'message.failed') return fields;
    const sent = typeof fields.external_message_id === 'string' ? await sendOf(fields.external_message_id) : null;
    return sent ? { ...fields, to: sent.recipient, message_purpose: sent.purpose, message_id: sent.messageId } : null;
  };

  return async (events) => {
    const outputs: OutgoingRecord[] = [];
    // Every output of an event continues that event's trace.
    for (const { event, trace } of events) {
      const received = event.payload;
      const log = logger.child({ correlation_id: received.event_id, instance_id: received.instance_id, event: received.event });
      // The ingest refuses bad envelopes before they are appended; one appended before it did is
      // refused here the same way: recorded with its reason, not mapped.
      let envelope: Record<string, unknown>;
      try {
        // The ingest drops media bytes before appending; a record appended before it did is read the same way.
        envelope = withoutBinaryFields(JSON.parse(received.payload) as Record<string, unknown>);
      } catch {
        envelope = {};
      }
      const problem = received.payload.trim().startsWith('{') ? envelopeProblem(envelope, jids) : 'the envelope is not a JSON object';
      if (problem) {
        await pool.query(sql.typeAlias('void')`
          SELECT FROM record_instance_event_rejection(${received.instance_id}, ${received.digest}, ${received.event.slice(0, 64)}, ${problem}, 'instance-events')`);
        metrics.eventsProcessed.inc({ group, topic: 'instance-events', outcome: 'rejected' });
        log.warn({ reason: problem }, 'instance event rejected');
        continue;
      }
      const calls = received.event === 'call' ? await acceptedCalls(pool, received.instance_id, envelope.data) : new Set<string>();
      const mapped = mapInstanceEvent(envelope, { optOutKeywords: config.instanceEvents.optOutKeywords, optInKeywords: config.instanceEvents.optInKeywords, acceptedCalls: calls, jids });

      if (mapped.connection) await saveConnection(pool, received.instance_id, mapped.connection, received.occurred_at);
      await saveLidLinks(pool, received.instance_id, mapped.links, received.occurred_at);
      if (mapped.calls.length > 0) await recordCalls(pool, received.instance_id, mapped.calls);
      await saveReceipts(pool, received.instance_id, mapped.receipts, received.occurred_at);
      // The outputs' ids: the facts' first, then the gateway events', then the identity links' (the
      // first two an order kept since the first release, so a batch redelivered across an upgrade
      // yields the ids it did; links came later and are numbered last for that reason).
      const eventId = (eventIndex: number) => derivedId(received.event_id, mapped.facts.length + eventIndex);
      await saveInbound(
        pool,
        mapped.inbound.map(({ eventIndex, ...message }) => ({ ...message, id: eventId(eventIndex), customerId: received.customer_id, instanceId: received.instance_id, receivedAt: received.occurred_at })),
      );
      // The text is never logged; the sender only masked.
      for (const flagged of mapped.inbound.filter((m) => m.optAction === 'flagged')) log.warn({ from: maskPhone(flagged.sender ?? '') }, 'possible opt-out request in free text; flagged for review in the inbound log (not suppressed)');

      // Identity links go out first: the policy knows the lid is the phone before it folds an
      // opt-out of either from the same envelope.
      const linkBase = mapped.facts.length + mapped.events.length;
      for (const [i, link] of mapped.links.entries()) {
        const factRecord: PolicyFactRecord = { ...toFactRecord(linkFact(received, link), received.event_id), event_id: derivedId(received.event_id, linkBase + i) };
        outputs.push(await codec.encode('PolicyInputRecorded', factRecord, trace));
      }
      if (mapped.links.length > 0) log.debug({ links: mapped.links.length }, 'linked ids learned');
      let index = 0;
      for (const fact of mapped.facts) {
        const factRecord: PolicyFactRecord = { ...toFactRecord(optFact(received, fact, eventId(fact.eventIndex)), received.event_id), event_id: derivedId(received.event_id, index++) };
        outputs.push(await codec.encode('PolicyInputRecorded', factRecord, trace));
        log.info({ recipient: maskPhone(fact.recipient), keyword: fact.keyword, kind: fact.kind }, fact.kind === 'suppress' ? 'recipient opted out' : 'recipient opted back in');
      }
      // The number guard's facts (guard-facts.ts): first connection, people who wrote, restriction signals.
      // Our send behind a provider id, looked up once per event (a message.failed and its restriction signal both ask).
      const sends = new Map<string, Promise<SendFacts | null>>();
      const sendOf = (providerMessageId: string) => {
        if (!sends.has(providerMessageId)) sends.set(providerMessageId, sentMessage(pool, received.instance_id, providerMessageId));
        return sends.get(providerMessageId)!;
      };
      const restrictions = await Promise.all(mapped.restrictions.map(async (report) => ({ report, send: report.externalMessageId ? await sendOf(report.externalMessageId) : null })));
      for (const factRecord of await guardFacts(pool, received, mapped, restrictions)) {
        outputs.push(await codec.encode('PolicyInputRecorded', factRecord, trace));
        if (factRecord.input_type === 'RestrictionSignalled') log.warn({ fact: factRecord.input_type }, 'the chat network signalled a restriction of this instance');
      }
      for (const gatewayEvent of mapped.events) {
        // Every event keeps its index (and so its id) whether or not it becomes a record.
        const eventId = derivedId(received.event_id, index++);
        const fields = await withOurSend(gatewayEvent, sendOf);
        if (!fields) {
          log.debug({ external_message_id: gatewayEvent.fields.external_message_id }, 'failure report of a message not sent through the gateway: no message.failed');
          continue;
        }
        const origin = { eventId, correlationId: received.event_id, occurredAt: received.occurred_at, customerId: received.customer_id, instanceId: received.instance_id };
        const input = { event: gatewayEvent.event, instance_id: received.instance_id, instance_name: received.instance_name, timestamp: new Date(received.occurred_at), ...fields };
        const built = buildCustomerEvent(origin, input as never);
        if (built.kind === 'refused') {
          metrics.eventsProcessed.inc({ group, topic: 'instance-events', outcome: 'event_refused' });
          log.warn({ gateway_event: gatewayEvent.event, fields: built.issues.map((i) => i.field) }, 'manager event not valid as a customer event: not emitted');
          continue;
        }
        if (built.droppedFields.length > 0) log.warn({ gateway_event: gatewayEvent.event, dropped: built.droppedFields }, 'malformed optional fields left out of a customer event');
        outputs.push(await codec.encode('GatewayEventEmitted', built.record, trace));
      }
      metrics.eventsProcessed.inc({ group, topic: 'instance-events', outcome: mapped.events.length > 0 ? 'mapped' : 'ignored' });
    }
    return outputs;
  };
}
