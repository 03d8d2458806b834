import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenInstance, startSimulator, type Harness } from '../../../services/instance-simulator/src/testing/sim-harness.ts';
import { findMessages } from './find-messages.ts';
import { findSentMessage, storeHolds, type FindSentMessageRequest } from './find-sent-message.ts';
import { sendText } from './send-text.ts';

let sim: Harness;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  await sim.call('DELETE', '/sim/faults');
});

let counter = 0;
const freshName = () => `lookup-${Date.now()}-${counter++}`;

/** Sends through the gateway's own client, as the delivery stage does. */
async function sendThroughClient(instance: string, phone: string, text: string): Promise<string> {
  const sent = await sendText({ managerUrl: sim.baseUrl, apiKey: sim.globalKey, instance, phone, text, timeoutMs: 5_000 });
  if (sent.kind !== 'accepted') throw new Error(`send not accepted: ${JSON.stringify(sent)}`);
  return sent.providerMessageId;
}

function lookup(instance: string, phone: string, text: string, overrides: Partial<FindSentMessageRequest> = {}) {
  return findSentMessage({
    managerUrl: sim.baseUrl,
    apiKey: sim.globalKey,
    instance,
    phone,
    text,
    sinceMs: Date.now() - 10_000,
    untilMs: Date.now(),
    timeoutMs: 5_000,
    ...overrides,
  });
}

/** A port nothing listens on: bound once by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('findSentMessage against the simulator', () => {
  it('finds a message sent through sendText by phone and exact text', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const id = await sendThroughClient(name, '+14155550100', 'Your order 17 has shipped');

    expect(await lookup(name, '+14155550100', 'Your order 17 has shipped')).toEqual({ kind: 'found', providerMessageId: id });
  });

  it('finds a Brazilian mobile the manager stored without the ninth digit, by either form', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const id = await sendThroughClient(name, '+5531987654321', 'Olá');
    const stored = await findMessages(sim.baseUrl, sim.globalKey, name, {}, 5_000);

    // The simulator applies createJid's rule: DDD 31, subscriber starting with 8 → ninth digit dropped.
    expect(stored.kind === 'page' && stored.page.records[0]?.key.remoteJid).toBe('553187654321@s.whatsapp.net');
    expect(await lookup(name, '+5531987654321', 'Olá')).toEqual({ kind: 'found', providerMessageId: id });
    expect(await lookup(name, '+553187654321', 'Olá')).toEqual({ kind: 'found', providerMessageId: id });
  });

  it('is absent for another text, another phone, a window before the send, or a message received', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sendThroughClient(name, '+14155550100', 'exact text');
    await sim.call('POST', `/sim/instances/${name}/inbound`, { body: { from: '+14155550111', text: 'from them' } });

    expect(await lookup(name, '+14155550100', 'exact text ')).toEqual({ kind: 'absent' });
    expect(await lookup(name, '+14155550100', 'Exact text')).toEqual({ kind: 'absent' });
    expect(await lookup(name, '+14155550199', 'exact text')).toEqual({ kind: 'absent' });
    expect(await lookup(name, '+14155550100', 'exact text', { sinceMs: Date.now() - 600_000, untilMs: Date.now() - 300_000 })).toEqual({ kind: 'absent' });
    expect(await lookup(name, '+14155550111', 'from them')).toEqual({ kind: 'absent' });
  });

  it('gives the oldest match, skipping ids already attributed', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const first = await sendThroughClient(name, '+14155550100', 'same words');
    const second = await sendThroughClient(name, '+14155550100', 'same words');

    expect(await lookup(name, '+14155550100', 'same words')).toEqual({ kind: 'found', providerMessageId: first });
    expect(await lookup(name, '+14155550100', 'same words', { excludeIds: [first] })).toEqual({ kind: 'found', providerMessageId: second });
    expect(await lookup(name, '+14155550100', 'same words', { excludeIds: new Set([first, second]) })).toEqual({ kind: 'absent' });
  });

  it('walks the pages: the match may be older than the first 50 messages to that phone', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const id = await sendThroughClient(name, '+14155550100', 'the early one');
    for (let i = 0; i < 60; i++) await sendThroughClient(name, '+14155550100', `later ${i}`);

    expect(await lookup(name, '+14155550100', 'the early one')).toEqual({ kind: 'found', providerMessageId: id });
  });

  it('is unreachable, naming neither phone nor text, when the lookup fails or answers too late', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    await sendThroughClient(name, '+14155550100', 'secret words');

    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'find_error_5xx', count: 1 } });
    const failing = await lookup(name, '+14155550100', 'secret words');
    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'find_timeout', delay_ms: 2_000, count: 1 } });
    const late = await lookup(name, '+14155550100', 'secret words', { timeoutMs: 300 });
    const unknownInstance = await lookup('no-such-instance', '+14155550100', 'secret words');

    for (const result of [failing, late, unknownInstance]) {
      expect(result.kind).toBe('unreachable');
      const detail = (result as { detail: string }).detail;
      expect(detail).not.toMatch(/4155550100|secret/);
    }
    expect(failing).toMatchObject({ detail: expect.stringContaining('500') });
    expect(await lookup(name, '+14155550100', 'secret words')).toMatchObject({ kind: 'found' });
  });

  it('is unreachable when nothing listens on the manager\'s port', async () => {
    const port = await closedPort();

    const result = await lookup('any', '+14155550100', 'hello', { managerUrl: `http://127.0.0.1:${port}` });

    expect(result).toEqual({ kind: 'unreachable', detail: expect.stringContaining('ECONNREFUSED') });
  });
});

describe('storeHolds: is the store known to keep the messages the instance sends', () => {
  const holds = (instance: string, providerMessageId: string) =>
    storeHolds({ managerUrl: sim.baseUrl, apiKey: sim.globalKey, instance, providerMessageId, timeoutMs: 5_000 });

  it('held when the store shows a message known sent; not held when the manager stores nothing; unreachable on a 500', async () => {
    const name = freshName();
    await createOpenInstance(sim, name);
    const kept = await sendThroughClient(name, '+14155550140', 'kept');
    expect(await holds(name, kept)).toEqual({ kind: 'held' });

    await sim.call('PUT', '/sim/storage', { body: { instance: name, save_new_messages: false } });
    try {
      const notKept = await sendThroughClient(name, '+14155550140', 'not kept');
      expect(await holds(name, notKept)).toEqual({ kind: 'not_held' });
    } finally {
      await sim.call('PUT', '/sim/storage', { body: { instance: name, save_new_messages: true } });
    }

    await sim.call('PUT', '/sim/faults', { body: { instance: name, mode: 'find_error_5xx', count: 1 } });
    expect(await holds(name, kept)).toMatchObject({ kind: 'unreachable' });
  });
});
