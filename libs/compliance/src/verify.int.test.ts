// Verify over a log decided under an earlier policy version: the pinned log of 68ee338
// (test/fixtures/policy-log/) put back where the policy consumer left it (its commands and facts
// on customer-events, its entries in policy_log and on the decisions topic) and verified by
// today's code, whose policy version is newer. Each command must be replayed with the version
// its entry recorded, so the log is clean.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, type Pool } from '@gw/db';
import { EventCodec, Topics, type AnyEvent, type SendDecided } from '@gw/events';
import { KafkaClient, KafkaInspector, type OutgoingRecord } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { createPolicy } from '@gw/policy';
import { entryHash, GENESIS_HASH, insertEntries } from '@gw/policy-log';
import { baseConfig, isolate, type Isolation } from '../../../test/support/infra.ts';
import type { ComplianceDeps } from './deps.ts';
import { verifyPolicyLog } from './verify.ts';

type Recorded = Omit<SendDecided, 'dispatch' | 'prev_hash'>;
interface PinnedLog {
  inputs: Array<{ p: number; o: string; type: AnyEvent['type']; payload: AnyEvent['payload'] }>;
  entries: Recorded[];
}
const log = JSON.parse(gunzipSync(readFileSync(new URL('../../../test/fixtures/policy-log/log-68ee338.json.gz', import.meta.url))).toString('utf8')) as PinnedLog;

let isolation: Isolation;
let pool: Pool;
let deps: ComplianceDeps;

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 2 });
  const topics = new Topics(isolation.topicPrefix, baseConfig.topicPartitions);
  const codec = new EventCodec(baseConfig.schemaRegistryUrl, topics);
  const kafka = new KafkaClient({ brokers: baseConfig.kafkaBrokers, clientId: 'verify-pinned', logger: createLogger('verify-pinned', 'error') });
  try {
    await kafka.ensureTopics(topics.specs());
    await codec.init(['SendRequested', 'PolicyInputRecorded', 'SendDecided']);
    // Keyed by customer as the API and gatewayctl append them: each lands on its recorded partition, in order.
    const inputs: OutgoingRecord[] = [];
    for (const input of log.inputs) inputs.push(await codec.encode(input.type as 'SendRequested', input.payload as never));
    await kafka.send(inputs);
    // The entries as the consumer wrote them: chained per partition, in Postgres and on the decisions topic.
    const heads = new Map<number, { hash: string; logId: number }>();
    const entries: SendDecided[] = [...log.entries]
      .sort((a, b) => a.log_id - b.log_id)
      .map((recorded) => {
        const entry = { ...recorded, dispatch: null, prev_hash: heads.get(recorded.partition_chain)?.hash ?? GENESIS_HASH } as SendDecided;
        expect(entryHash(entry.prev_hash, entry)).toBe(entry.entry_hash);
        heads.set(entry.partition_chain, { hash: entry.entry_hash, logId: entry.log_id });
        return entry;
      });
    for (let i = 0; i < entries.length; i += 500) await insertEntries(pool, entries.slice(i, i + 500));
    for (const [partition, head] of heads) await pool.query(sql.typeAlias('void')`INSERT INTO policy_chain (partition, head_hash, last_log_id) VALUES (${partition}, ${head.hash}, ${head.logId})`);
    const decisions: OutgoingRecord[] = [];
    for (const entry of entries) decisions.push(await codec.encode('SendDecided', entry));
    await kafka.send(decisions);
  } finally {
    await kafka.close();
  }
  // No consumer offsets committed: verify replays every command to the topic's end.
  deps = { pool, kafka: new KafkaInspector(baseConfig.kafkaBrokers, isolation.topicPrefix), codec, topics };
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

describe('verify of a log decided under an earlier policy version', () => {
  it('replays each command with the version its entry recorded: the log is clean', async () => {
    const recorded = new Set(log.entries.map((e) => e.policy_version));
    expect(recorded.has(createPolicy().version)).toBe(false);

    // Commands appended twice are decided once: the consumer re-emitted the recorded decision.
    const commands = log.inputs.filter((i) => i.type === 'SendRequested').length;
    const report = await verifyPolicyLog(deps, { replayWorker: false });
    expect(report.divergences).toEqual([]);
    expect(report).toMatchObject({ ok: true, counts: { db_rows: log.entries.length, kafka_decisions: log.entries.length, decisions_replayed: log.entries.length, duplicate_commands: commands - log.entries.length, pending_commands: 0 } });
  }, 120_000);
});
