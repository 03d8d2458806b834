import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { SEAL_USES, SecretBox } from '@gw/security';
import { readTopic } from '../../../../test/support/topic-reader.ts';
import { claim, recordOutcomes } from '../dispatch/delivery-store.ts';
import { dispatchAccepted } from '../dispatch/handler.ts';
import { InstanceDirectory } from '../dispatch/instance-directory.ts';
import { taskOf } from '../dispatch/outcomes.ts';
import { acceptedDecision, asEvents, useDeliveryFixture } from '../testing.ts';
import { randomUUID } from 'node:crypto';
import { createOpenInstance } from '../../../instance-simulator/src/testing/sim-harness.ts';
import { OpenSendResolver, type ResolverSettings } from './resolver.ts';

const decisionSuffix = () => randomUUID().slice(0, 8);

// The resolver of sends whose outcome is open, against real Postgres, Kafka and the simulator's
// message store (Evolution's POST /chat/findMessages).
const suite = useDeliveryFixture();

// The fixture's send timeout is 1.5 s: an absence counts 1.5 + 2 s after an attempt started.
const SETTINGS: ResolverSettings = { everyMs: 1_000_000, afterMs: 2_000, ackDeadlineMs: 600_000, maxAttempts: 3, lookupTimeoutMs: 1_500, settleMs: 2_000, storeEvidenceTtlMs: 60_000 };

const directory = () => new InstanceDirectory(suite.fixture.runtime.pool, new SecretBox(suite.fixture.isolation.env.GATEWAY_SECRET_KEY!));

function resolver(settings: Partial<ResolverSettings> = {}) {
  return new OpenSendResolver({ runtime: suite.fixture.runtime, directory: directory(), breakers: suite.breakers, lanes: suite.lanes }, { ...SETTINGS, ...settings });
}

/** Sends a decision through the delivery stage's handler (claim, sendText, record), as the stage does. */
const dispatchNow = (n: number, text: string) => {
  const decision = acceptedDecision(suite.fixture, n, text);
  return dispatchAccepted({ runtime: suite.fixture.runtime, directory: directory(), breakers: suite.breakers, lanes: suite.lanes })(asEvents([decision]), {} as never).then(() => decision);
};

/** Makes the send due now, as if its attempt had started `agoMs` ago. */
const age = (messageId: string, agoMs: number) =>
  suite.fixture.runtime.pool.query(sql.typeAlias('void')`
    UPDATE deliveries SET attempt_started_at = now() - make_interval(secs => ${agoMs}::float8 / 1000), next_check_at = NULL WHERE message_id = ${messageId}`);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A send claimed `agoMs` ago whose process died before recording anything. */
async function interrupted(n: number, text: string, agoMs = 5_000) {
  const decision = acceptedDecision(suite.fixture, n, text);
  await claim(suite.fixture.runtime.pool, [taskOf(decision, 'front')]);
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
    const outcomes = events.filter((e) => e.type === 'MessageDispatched' && e.payload.message_id === decision.message_id);
    expect(outcomes).toHaveLength(1);
    // The outcome carries what its consumers need, from the row claimed (no policy_log row exists here).
    expect(outcomes[0]!.payload).toMatchObject({ recipient: decision.recipient, message_purpose: 'authentication', instance_name: 'front' });
  });

  it('leaves the decision, redelivered once the resolver settled its send, nothing to append: the outcome is on the topic once', async () => {
    // A delivery process killed mid-send; the resolver of the restarted process settles the send
    // before the stage gets its partition back and is handed the uncommitted decision again.
    const decision = await interrupted(12, 'settled before the redelivery');
    const sent = await suite.fixture.simulator.call('POST', `/message/sendText/${suite.fixture.managerInstance}`, { body: { number: decision.dispatch!.phone.slice(1), text: 'settled before the redelivery' } });
    expect(sent.status).toBe(201);
    await resolver().resolveDue();
    const redelivered = await dispatchAccepted({ runtime: suite.fixture.runtime, directory: directory(), breakers: suite.breakers, lanes: suite.lanes })(asEvents([decision]), {} as never);
    expect(redelivered).toEqual([]);
    expect((await suite.fixture.ledger()).get('settled before the redelivery')).toBe(1);
    const events = await readTopic(suite.fixture.isolation.env, 'deliveryEvents', 1500);
    expect(events.filter((e) => e.type === 'MessageDispatched' && e.payload.message_id === decision.message_id)).toHaveLength(1);
  });

  it("does not take another send's message to the same recipient for this one: the sends are told apart by delivery's own rows, without policy_log", async () => {
    // No policy_log row exists for either send (the fixture writes none): delivery must know the recipients itself.
    const decision = await interrupted(9, 'same text twice', 5_000);
    // Another send of the same text to the same recipient, dispatched after this one's claim.
    const other = await dispatchNow(9, 'same text twice');
    const otherRow = await row(other.message_id);
    expect(otherRow).toMatchObject({ state: 'dispatched' });
    await resolver().resolveDue();
    // Absent once the other's message is set aside: sent again under a new attempt, with a message of its own.
    const resolved = await row(decision.message_id);
    expect(resolved).toMatchObject({ state: 'dispatched', attempt: 2 });
    expect(resolved!.provider_message_id).not.toBe(otherRow!.provider_message_id);
    expect((await suite.fixture.ledger()).get('same text twice')).toBe(2);
  });

  it('sends again, once, a send absent from a store known to keep sent messages, but only once a slow send would have been stored', async () => {
    // Positive evidence: the store holds a message the instance is known to have sent (201).
    await dispatchNow(20, 'known sent, store on');
    const decision = await interrupted(2, 'never reached the manager', 1_000);
    await resolver({ afterMs: 0 }).resolveDue();
    // 1 s after the attempt: a slow manager could still be sending it. Held, not resent.
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatching', attempt: 1 });
    expect((await suite.fixture.ledger()).get('never reached the manager')).toBeUndefined();
    await age(decision.message_id, 5_000);
    await Promise.all([resolver().resolveDue(), resolver().resolveDue()]);
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatched', attempt: 2 });
    expect((await suite.fixture.ledger()).get('never reached the manager')).toBe(1);
    // The late answer of the first attempt changes nothing now.
    const late = await recordOutcomes(suite.fixture.runtime.pool, [{ messageId: decision.message_id, attempt: 1, outcome: null, detail: 'late' }]);
    expect(late.size).toBe(0);
  });

  it('never sends a second time a slow send the manager completes after our timeout: it is found once stored', async () => {
    await sim('PUT', '/sim/faults', { instance: suite.fixture.managerInstance, mode: 'stall', delay_ms: 2_500, count: 1 });
    const decision = await dispatchNow(5, 'slow but sent');
    // Our call timed out (1.5 s); the manager is still at it.
    expect(await row(decision.message_id)).toMatchObject({ state: 'unknown', attempt: 1 });
    await resolver({ afterMs: 0 }).resolveDue();
    expect(await row(decision.message_id)).toMatchObject({ state: 'unknown', attempt: 1 });
    await pause(2_500); // the manager finishes the send and stores it
    await suite.fixture.runtime.pool.query(sql.typeAlias('void')`UPDATE deliveries SET next_check_at = NULL WHERE message_id = ${decision.message_id}`);
    await resolver({ afterMs: 0 }).resolveDue();
    expect(await row(decision.message_id)).toMatchObject({ state: 'dispatched', attempt: 1 });
    expect((await suite.fixture.ledger()).get('slow but sent')).toBe(1);
  });

  it('fails outcome_unknown, never sending again, a timed-out send when the manager stores nothing', async () => {
    const manager = suite.fixture.managerInstance;
    await sim('PUT', '/sim/storage', { instance: manager, save_new_messages: false });
    try {
      // The newest message known sent is not in the store: it is not known to keep them.
      await dispatchNow(6, 'known sent, store off');
      await sim('PUT', '/sim/faults', { instance: manager, mode: 'stall', delay_ms: 2_000, count: 1 });
      const decision = await dispatchNow(7, 'slow, store off');
      await pause(700); // the slow send completes, and is stored nowhere
      await age(decision.message_id, 5_000);
      await resolver().resolveDue();
      expect(await row(decision.message_id)).toMatchObject({ state: 'failed', attempt: 1, failure_reason: 'outcome_unknown' });
      expect((await suite.fixture.ledger()).get('slow, store off')).toBe(1);
      const events = await readTopic(suite.fixture.isolation.env, 'deliveryEvents', 1500);
      const failedEvent = events.find((e) => e.type === 'DeliveryFailed' && e.payload.message_id === decision.message_id);
      expect(failedEvent?.payload).toMatchObject({ reason: 'outcome_unknown', definitive: false });
      // Later rounds do not pick it up again.
      await resolver().resolveDue();
      expect((await suite.fixture.ledger()).get('slow, store off')).toBe(1);
    } finally {
      await sim('PUT', '/sim/storage', { instance: manager, save_new_messages: true });
    }
  });

  it('fails outcome_unknown a send absent at a manager of which no message is known sent', async () => {
    // A second instance on the same manager, with nothing dispatched through it yet.
    const { runtime, simulator, isolation, customerId } = suite.fixture;
    const manager = `fresh-${decisionSuffix()}`;
    const instanceId = `ins_${decisionSuffix()}`;
    const token = await createOpenInstance(simulator, manager);
    await runtime.pool.query(sql.typeAlias('void')`
      INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
      VALUES (${instanceId}, ${customerId}, 'fresh', ${simulator.baseUrl}, ${manager}, ${new SecretBox(isolation.env.GATEWAY_SECRET_KEY!).seal(token, SEAL_USES.managerApiKey(instanceId))})`);
    const decision = { ...acceptedDecision(suite.fixture, 8, 'first of a fresh instance'), instance_id: instanceId };
    decision.dispatch = { ...decision.dispatch!, instance_name: manager };
    await claim(runtime.pool, [taskOf(decision, 'fresh')]);
    await age(decision.message_id, 5_000);
    await resolver().resolveDue();
    expect(await row(decision.message_id)).toMatchObject({ state: 'failed', failure_reason: 'outcome_unknown' });
    expect((await simulator.call('GET', `/sim/ledger?instance=${manager}`)).body.messages).toHaveLength(0);
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
