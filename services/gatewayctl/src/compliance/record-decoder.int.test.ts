// The replay's synchronous decoder, and the raw batches handed to its workers, against EventCodec
// and the real schema registry: every record must decode to exactly what the codec gives, and fail
// exactly where the codec fails.
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { EventCodec, Topics, type SendRequested } from '@gw/events';
import type { ConsumedRecord } from '@gw/kafka';
import { toFactRecord } from '@gw/policy-log';
import { SyncRecordDecoder } from './record-decoder.ts';
import { packBatch, ReplayAccumulator, replayBatch, UNDECODABLE, type ReplayScope } from './replay-pass.ts';

const config = loadConfig();
const prefix = `replaydec${Date.now().toString(36)}.`;
const registryUrl = config.schemaRegistryUrl;

afterAll(async () => {
  // Leave the shared registry as we found it.
  const subjects = (await (await fetch(`${registryUrl}/subjects`)).json()) as string[];
  for (const subject of subjects.filter((s) => s.startsWith(prefix))) {
    await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}`, { method: 'DELETE' });
  }
});

const command = (i: number): SendRequested => ({
  event_id: `evt-${i}`,
  correlation_id: `cmd-${i}`,
  occurred_at: 1_795_000_000_000 + i * 1000,
  customer_id: `cus_${i % 3}`,
  instance_id: 'ins_1',
  instance_name: 'demo',
  message_id: `msg_${i}`,
  phone: '+14155552671',
  message: i % 4 === 0 ? 'Flash sale! 20% off' : `Your code is ${100_000 + i} — ok ✓`,
  message_purpose: 'transactional',
  source: 'api',
  idempotency_key: i % 2 ? null : `idem-${i}`,
});

const consumed = (partition: number, offset: number, value: Buffer | null, headers: Record<string, string>): ConsumedRecord => ({
  topic: `${prefix}customer-events.v1`, partition, offset: String(offset), key: null, value, headers, timestamp: '0',
});

async function sample(codec: EventCodec): Promise<ConsumedRecord[]> {
  const records: ConsumedRecord[] = [];
  let offset = 0;
  for (const fact of [
    { type: 'CustomerRegistered' as const, customerId: 'cus_0', at: 1 },
    { type: 'PlanChanged' as const, customerId: 'cus_0', at: 2, planId: 'starter', validUntil: 1_900_000_000_000, by: 'ops', reason: 'paid' },
  ]) {
    const encoded = await codec.encode('PolicyInputRecorded', toFactRecord(fact, 'op-1'));
    records.push(consumed(0, offset++, encoded.value, encoded.headers!));
  }
  for (let i = 0; i < 12; i++) {
    const encoded = await codec.encode('SendRequested', command(i));
    records.push(consumed(0, offset++, encoded.value, encoded.headers!));
  }
  const good = records[2]!.value!;
  // What the codec skips or refuses: no header, an unknown type, no value, an empty value, a wrong
  // magic byte, an unknown schema id, a truncated body.
  records.push(consumed(0, offset++, good, {}));
  records.push(consumed(0, offset++, good, { 'event-type': 'NoSuchEvent' }));
  records.push(consumed(0, offset++, null, { 'event-type': 'SendRequested' }));
  records.push(consumed(0, offset++, Buffer.alloc(0), { 'event-type': 'SendRequested' }));
  records.push(consumed(0, offset++, Buffer.concat([Buffer.from([1]), good.subarray(1)]), { 'event-type': 'SendRequested' }));
  const unknownId = Buffer.from(good);
  unknownId.writeInt32BE(2_000_000_000, 1);
  records.push(consumed(0, offset++, unknownId, { 'event-type': 'SendRequested' }));
  records.push(consumed(0, offset++, good.subarray(0, good.length - 3), { 'event-type': 'SendRequested' }));
  return records;
}

async function viaCodec(codec: EventCodec, record: ConsumedRecord): Promise<unknown> {
  try {
    return await codec.decode(record);
  } catch {
    return UNDECODABLE;
  }
}

async function viaSync(decoder: SyncRecordDecoder, record: ConsumedRecord): Promise<unknown> {
  try {
    const decoded = decoder.decode(record);
    return decoded instanceof Promise ? await decoded : decoded;
  } catch {
    return UNDECODABLE;
  }
}

describe('the replay decoder against EventCodec and the real registry', () => {
  it('decodes every record as the codec does (synchronously once a schema id is known) and refuses the same ones', async () => {
    const codec = new EventCodec(registryUrl, new Topics(prefix, 1));
    await codec.init(['SendRequested', 'PolicyInputRecorded']);
    const records = await sample(codec);
    const decoder = new SyncRecordDecoder(registryUrl);
    // Twice: the first pass loads the schemas, the second decodes without waiting.
    for (const pass of [1, 2]) {
      for (const record of records) expect(await viaSync(decoder, record), `pass ${pass}, offset ${record.offset}`).toEqual(await viaCodec(codec, record));
    }
    const known = records[3]!;
    expect(decoder.decode(known)).not.toBeInstanceOf(Promise);
    expect(await viaSync(decoder, records[records.length - 1]!)).toBe(UNDECODABLE);
  });

  it('a packed batch replays to the same outcome as the records decoded one by one', async () => {
    const codec = new EventCodec(registryUrl, new Topics(prefix, 1));
    await codec.init(['SendRequested', 'PolicyInputRecorded']);
    const records = await sample(codec);
    const scope: ReplayScope = { topic: records[0]!.topic, ends: [[0, '0', String(records.length)]], committed: [[0, '10']], customers: null, keep: ['cmd-3'] };

    const expected = new ReplayAccumulator(scope);
    for (const record of records) expected.add((await viaCodec(codec, record)) as never, 0, record.offset);

    const packed = new ReplayAccumulator(scope);
    const decoder = new SyncRecordDecoder(registryUrl);
    // Split in two batches, transferred as a worker gets them (structured clone of the batch).
    for (const part of [records.slice(0, 7), records.slice(7)]) await replayBatch(structuredClone(packBatch(part, 0)), decoder, packed);

    // The same outcome; a kept entry gets a fresh event id each time it is built.
    const withoutIds = (o: typeof expected.outcome) => ({ ...o, kept: o.kept.map(({ event_id: _id, ...entry }) => entry) });
    expect(withoutIds(packed.outcome)).toEqual(withoutIds(expected.outcome));
    expect(packed.outcome).toMatchObject({ read: records.length, undecodable: 4, customerEvents: 14 });
    expect(packed.outcome.decided.length).toBe(8); // offsets 2..9: the rest is past the committed offset
    expect(packed.outcome.pending.length).toBe(4);
    expect(packed.outcome.kept.map((e) => e.correlation_id)).toEqual(['cmd-3']);
  });

  it("the bench's cut-short passes: decode only decides nothing; decide only decides the same commands, without digests", async () => {
    const codec = new EventCodec(registryUrl, new Topics(prefix, 1));
    await codec.init(['SendRequested', 'PolicyInputRecorded']);
    const records = await sample(codec);
    const scope: ReplayScope = { topic: records[0]!.topic, ends: [[0, '0', String(records.length)]], committed: [[0, '10']], customers: null };
    const replay = async (s: ReplayScope) => {
      const accumulator = new ReplayAccumulator(s);
      await replayBatch(packBatch(records, 0), new SyncRecordDecoder(registryUrl), accumulator);
      return accumulator.outcome;
    };
    const full = await replay(scope);
    const decodeOnly = await replay({ ...scope, stopAfter: 'decode' });
    const decideOnly = await replay({ ...scope, stopAfter: 'decide' });

    // All three read and decode the same records and find the same pending commands.
    for (const outcome of [decodeOnly, decideOnly]) {
      expect(outcome).toMatchObject({ read: full.read, undecodable: full.undecodable, customerEvents: full.customerEvents, pending: full.pending });
    }
    expect(decodeOnly.decided).toEqual([]);
    expect(full.decided.length).toBe(8);
    expect(full.decided.every(([, digest]) => digest.length > 0)).toBe(true);
    expect(decideOnly.decided).toEqual(full.decided.map(([id, , partition, offset, customer]) => [id, '', partition, offset, customer]));
  });
});
