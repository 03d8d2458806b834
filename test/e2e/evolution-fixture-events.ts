// What the customer's webhook must receive for an Evolution API fixture (test/fixtures/evolution),
// and a matcher that names the fixture behind every event that is missing, wrong or not expected.
// Used by evolution-fixtures.e2e.test.ts; the fixtures' `expect` is the only source of expectations.
import { expandMarkers, type LoadedFixture } from '../fixtures/evolution/load.ts';

/** An event the fixture must give, with the fields the delivered body must carry. */
export interface ExpectedEvent {
  fixture: string;
  event: string;
  /** Field → value; `undefined` means the field must be absent. */
  fields: Record<string, unknown>;
  /** The field that ties a delivered event to its fixture (a message id or chat id), when there is one. */
  anchor?: string;
}

/** A delivered customer webhook body. */
export type Delivered = Record<string, unknown> & { event: string };

const SENDER_EVENTS = new Set(['message.received', 'group.message_received', 'call.received']);
const MESSAGE_EVENTS = new Set(['message.received', 'group.message_received']);
const LIFECYCLE_EVENTS = new Set(['message.delivered', 'message.read', 'message.status_updated', 'message.failed']);

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const firstItem = (value: unknown): Json => asObject(Array.isArray(value) ? value[0] : value);

/** The events a fixture states in `expect`, each with the fields the webhook body must show. */
export function expectedEvents(loaded: LoadedFixture): ExpectedEvent[] {
  const want = loaded.fixture.expect;
  const data = firstItem(loaded.envelope.data);
  return want.events.map((event, i) => {
    const fields: Record<string, unknown> = { ...(want.eventFields?.[i] ?? {}) };
    let anchor: string | undefined;
    if (SENDER_EVENTS.has(event) && want.receivedFrom) {
      fields.from = want.receivedFrom.from;
      fields.from_lid = want.receivedFrom.fromLid;
    }
    if (MESSAGE_EVENTS.has(event)) {
      fields.external_message_id = asObject(data.key).id;
      anchor = 'external_message_id';
    }
    if (event === 'recipient.opted_out') fields.from = want.optOut;
    if (LIFECYCLE_EVENTS.has(event) && want.receipts?.[0]) {
      fields.external_message_id = want.receipts[0].externalId;
      if (event !== 'message.failed') fields.status = want.receipts[0].status;
      anchor = 'external_message_id';
    }
    if (event === 'conversation.updated') {
      fields.conversation_id ??= data.remoteJid;
      anchor = 'conversation_id';
    }
    return { fixture: loaded.title, event, fields, anchor };
  });
}

/** The ids an envelope names (message ids, chat ids), to say which fixture an unexpected event came from. */
export function idsNamedBy(loaded: LoadedFixture): string[] {
  const data = firstItem(loaded.envelope.data);
  const key = asObject(data.key);
  return [key.id, data.keyId, data.id, data.remoteJid, key.remoteJid].filter((v): v is string => typeof v === 'string');
}

const fieldsMatch = (body: Delivered, fields: Record<string, unknown>) => Object.entries(fields).every(([field, value]) => body[field] === value);

/** The delivered fields an expectation looks at (so a mismatch shows them side by side). */
const shown = (body: Delivered, fields: Record<string, unknown>) => Object.fromEntries(Object.keys(fields).map((field) => [field, body[field] ?? '(absent)']));

export interface Comparison {
  /** One line per problem, each naming its fixture: an event missing, arrived with other fields, or not expected at all. */
  problems: string[];
  /** True when every expected event arrived with its fields. */
  complete: boolean;
}

/**
 * Pairs delivered events with expected ones (each delivered event used once). An expected event
 * whose anchor arrived with other fields is reported as a mismatch with what arrived; a delivered
 * event paired with nothing is reported as invented, with the fixture whose ids it carries.
 */
export function compareDelivered(expected: ExpectedEvent[], delivered: Delivered[], fixtureIds: Map<string, string[]>): Comparison {
  const unused = new Set(delivered.map((_, i) => i));
  const problems: string[] = [];
  const unmatched: ExpectedEvent[] = [];
  for (const want of expected) {
    const hit = [...unused].find((i) => delivered[i]!.event === want.event && fieldsMatch(delivered[i]!, want.fields));
    if (hit === undefined) unmatched.push(want);
    else unused.delete(hit);
  }
  for (const want of unmatched) {
    const near = [...unused].filter((i) => delivered[i]!.event === want.event && (!want.anchor || delivered[i]![want.anchor] === want.fields[want.anchor]));
    const seen = near.length > 0 ? `arrived instead with ${near.map((i) => JSON.stringify(shown(delivered[i]!, want.fields))).join(' and ')}` : 'none arrived';
    problems.push(`${want.fixture}: expected ${want.event} ${JSON.stringify(want.fields, (_k, v) => (v === undefined ? '(absent)' : v))}; ${seen}`);
    // Reported here as the wrong version of this event, not once more as an invented one.
    for (const i of near) unused.delete(i);
  }
  for (const i of unused) {
    const body = delivered[i]!;
    const values = Object.values(body).filter((v): v is string => typeof v === 'string');
    const sources = [...fixtureIds].filter(([, ids]) => ids.some((id) => values.includes(id))).map(([title]) => title);
    const { instance_id: _i, instance_name: _n, timestamp: _t, webhook_id: _w, ...rest } = body;
    problems.push(`${sources.length > 0 ? sources.join(' or ') : '(no fixture names its ids)'}: gave an event no fixture expects: ${JSON.stringify(rest)}`);
  }
  return { problems, complete: unmatched.length === 0 };
}

/**
 * The fixture's envelope with its ids replaced consistently (raw digits, so every JID form and the
 * E.164 phone follow), markers expanded as load.ts does: the same envelope, about another person.
 */
export function withIdsReplaced(loaded: LoadedFixture, replace: Record<string, string>): Json {
  let text = JSON.stringify(loaded.fixture.envelope);
  for (const [from, to] of Object.entries(replace)) text = text.split(from).join(to);
  return expandMarkers(JSON.parse(text)) as Json;
}
