import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { SecretBox } from '@gw/security';
import { readTopic } from '../../../../test/support/topic-reader.ts';
import { claim, recordOutcomes } from '../dispatch/delivery-store.ts';
import { InstanceDirectory } from '../dispatch/instance-directory.ts';
import { acceptedDecision, useDeliveryFixture } from '../testing.ts';
import { OpenSendResolver, type ResolverSettings } from './resolver.ts';

// The resolver of sends whose outcome is open, against real Postgres, Kafka and the simulator's
// message store (Evolution's POST /chat/findMessages).
const suite = useDeliveryFixture();

const SETTINGS: ResolverSettings = { everyMs: 1_000_000, afterMs: 2_000, ackDeadlineMs: 600_000, maxAttempts: 3, lookupTimeoutMs: 1_500 };

function resolver(settings: Partial<ResolverSettings> = {}) {
  const directory = new InstanceDirectory(suite.fixture.runtime.pool, new SecretBox(suite.fixture.isolation.env.GATEWAY_SECRET_KEY!));
  return new OpenSendResolver({ runtime: suite.fixture.runtime, directory, breakers: suite.breakers }, { ...SETTINGS, ...settings });
}

/** A send claimed `agoMs` ago whose process died before recording anything. */
async function interrupted(n: number, text: string, agoMs = 5_000) {
  const decision = acceptedDecision(suite.fixture, n, text);
  await claim(suite.fixture.runtime.pool, [decision]);
  await suite.fixture.runtime.pool.query(sql.typeAlias('void')`
    UPDATE deliveries SET attempt_started_at = now() - make_interval(secs => ${agoMs}::float8 / 1000),
      created_at = now() - make_interval(secs => ${agoMs}::float8 / 1000)
     WHERE message_id = ${decision.message_id}`);
  return decision;
}

const DeliveryRow = z.object({
  state: z.string(),
  attempt: z.number(),
  provider_message_id: z.string().nullable(),
  failure_reason: z.string().nullable(),
  failed_checks: z.number(),
  dispatch_text: z.string().nullable(),
});

const row = (messageId: string) =>
  suite.fixture.runtime.pool.maybeOne(sql.type(DeliveryRow)`
    SELECT state, attempt, provider_message_id, failure_reason, failed_checks, dispatch_text FROM deliveries WHERE message_id = ${messageId}`);

const sim = (method: string, path: string, body?: unknown) => suite.fixture.simulator.call(method, path, body === undefined ? {} : { body });

describe('the resolver of open sends', () => {
  it('marks dispatched a send the manager holds, without sending it again, and appends its outcome', async () => {
    const decision = await interrupted(1, 'held by the manager');
    // The send reached the manager before the process died.
    const sent = await suite.fixture.simulator.call('POST', `/message/sendText/${suite.fixture.managerInstance}`, { body: { number: decision.dispatch!.phone.slice(1), text: 'held by the manager' } });
    expect(sent.status).toBe(201);
    await resolver().resolveDue();
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatched', attempt: 1, provider_message_id: sent.body.key.id, dispatch_text: null });
    expect((await suite.fixture.ledger()).get('held by the manager')).toBe(1);
    const events = await readTopic(suite.fixture.isolation.env, 'deliveryEvents', 1500);
    expect(events.filter((e) => e.type === 'MessageDispatched' && e.payload.message_id === decision.message_id)).toHaveLength(1);
  });

  it('sends again, under a new attempt, a send the manager confirms it does not have: exactly once', async () => {
    const decision = await interrupted(2, 'never reached the manager');
    await Promise.all([resolver().resolveDue(), resolver().resolveDue()]);
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatched', attempt: 2 });
    expect((await suite.fixture.ledger()).get('never reached the manager')).toBe(1);
    // The late answer of the first attempt changes nothing now.
    const late = await recordOutcomes(suite.fixture.runtime.pool, [{ messageId: decision.message_id, attempt: 1, outcome: null, detail: 'late' }]);
    expect(late.size).toBe(0);
  });

  it('leaves a send alone while its attempt may still be under way', async () => {
    const decision = await interrupted(3, 'still in flight', 100);
    await resolver().resolveDue();
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatching', attempt: 1 });
    expect((await suite.fixture.ledger()).get('still in flight')).toBeUndefined();
  });

  it('asks again with backoff while the manager cannot be asked, and fails the send (no_ack) only past the deadline', async () => {
    const decision = await interrupted(4, 'manager unreachable', 5_000);
    await sim('PUT', '/sim/faults', { instance: suite.fixture.managerInstance, mode: 'find_error_5xx', count: 10 });
    try {
      await resolver().resolveDue();
      expect(await row(decision.message_id)).toMatchObject({ state: 'dispatching', failed_checks: 1 });
      // Not due again until its backoff has passed.
      await resolver().resolveDue();
      expect(await row(decision.message_id)).toMatchObject({ failed_checks: 1 });
      await suite.fixture.runtime.pool.query(sql.typeAlias('void')`UPDATE deliveries SET next_check_at = now() WHERE message_id = ${decision.message_id}`);
      await resolver({ ackDeadlineMs: 3_000 }).resolveDue();
      expect(await row(decision.message_id)).toMatchObject({ state: 'failed', failure_reason: 'no_ack' });
      expect((await suite.fixture.ledger()).get('manager unreachable')).toBeUndefined();
    } finally {
      await sim('PUT', '/sim/faults', { instance: suite.fixture.managerInstance, mode: 'none' });
    }
  });
});
