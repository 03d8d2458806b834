import type { Command } from 'commander';
import type { GatewayConfig } from '@gw/config';
import { EventCodec, newEventId, Topics, type DeadLetterResolved } from '@gw/events';
import { KafkaClient, KafkaInspector } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { CliError } from '../action.ts';
import { operator } from '../policy/commands.ts';
import type { ActionWrapper } from '../action.ts';
import { readDeadLetters, summary, type DeadLetter } from './letters.ts';

export interface DlqCommandDeps {
  config: GatewayConfig;
  action: ActionWrapper;
}

/** Connections of one dlq command: a reader for the topic, and a producer only when something is appended. */
function connections(config: GatewayConfig) {
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  const inspector = new KafkaInspector(config.kafkaBrokers, config.topicPrefix);
  let producer: KafkaClient | undefined;
  return {
    topics,
    codec,
    letters: () => readDeadLetters(inspector, codec, topics),
    async append(records: Parameters<KafkaClient['send']>[0]) {
      producer ??= new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'gatewayctl-dlq', logger: createLogger('gatewayctl', config.gatewayctl.logLevel, true) });
      await producer.send(records);
    },
    close: async () => producer?.close(),
  };
}

function find(letters: DeadLetter[], id: string): DeadLetter {
  const found = letters.find((l) => l.letter.event_id === id);
  if (!found) throw new CliError(`No dead letter ${id}. List them with: gatewayctl dlq list --all`);
  return found;
}

/** Adds `dlq list|show|retry|discard` to the operator CLI. */
export function registerDlqCommands(program: Command, { config, action }: DlqCommandDeps): void {
  const dlq = program.command('dlq').description('records the stages gave up on (dead letters): list, inspect, retry or discard them');
  const run = <A extends unknown[]>(work: (conn: ReturnType<typeof connections>, ...args: A) => Promise<unknown>) =>
    action(async (...args: A) => {
      const conn = connections(config);
      try {
        return await work(conn, ...args);
      } finally {
        await conn.close();
      }
    });

  dlq
    .command('list')
    .description('open dead letters, oldest first (--all: retried and discarded ones too)')
    .option('--stage <stage>', 'only this stage: policy, delivery, instance-events, delivery-outcome-events, webhook-enqueue')
    .option('--all', 'include resolved letters')
    .action(run(async (conn, opts: { stage?: string; all?: boolean }) => {
      const letters = await conn.letters();
      return letters.filter((l) => (opts.all || l.status === 'open') && (!opts.stage || l.letter.stage === opts.stage)).map(summary);
    }));

  dlq
    .command('show')
    .argument('<id>', 'dead letter id')
    .option('--raw', "also print the record's value, base64 (it may hold phone numbers and message texts)")
    .action(run(async (conn, id: string, opts: { raw?: boolean }) => {
      const { letter, ...rest } = find(await conn.letters(), id);
      return {
        ...summary({ letter, ...rest }),
        source_timestamp: new Date(Number(letter.source_timestamp)).toISOString(),
        key: letter.source_key,
        headers: letter.source_headers,
        value_bytes: letter.source_value?.length ?? 0,
        ...(opts.raw ? { value_base64: letter.source_value?.toString('base64') ?? null } : {}),
      };
    }));

  const resolve = async (conn: ReturnType<typeof connections>, found: DeadLetter, resolution: DeadLetterResolved['resolution'], by: string | undefined, reason: string) => {
    await conn.codec.init(['DeadLetterResolved']);
    const resolved: DeadLetterResolved = {
      event_id: newEventId(),
      correlation_id: found.letter.event_id,
      occurred_at: Date.now(),
      customer_id: found.letter.customer_id,
      instance_id: '',
      dead_letter_id: found.letter.event_id,
      resolution,
      by: operator(by),
      reason,
    };
    await conn.append([await conn.codec.encode('DeadLetterResolved', resolved)]);
    return summary({ ...found, status: resolution, resolution: resolved });
  };

  dlq
    .command('retry')
    .description("append the record again to its topic (its stage processes it anew, after what came since), then mark the letter retried")
    .argument('<id>', 'dead letter id')
    .option('--reason <text>', 'why it can go through now', 'retried by an operator')
    .option('--by <operator>', 'who (default: $GATEWAY_OPERATOR or $USER)')
    .action(run(async (conn, id: string, opts: { reason: string; by?: string }) => {
      const found = find(await conn.letters(), id);
      if (found.status !== 'open') throw new CliError(`Dead letter ${id} is already ${found.status}.`);
      const { letter } = found;
      if (!letter.source_value) throw new CliError(`Dead letter ${id} has no value to append again; discard it instead.`);
      // The record first, then the resolution: a retry whose resolution was lost can be run again,
      // as every stage is idempotent on the ids the record carries.
      await conn.append([{ topic: letter.source_topic, key: letter.source_key ?? '', value: letter.source_value, headers: letter.source_headers }]);
      return resolve(conn, found, 'retried', opts.by, opts.reason);
    }));

  dlq
    .command('discard')
    .description('mark the letter discarded: its record is not processed (it stays on the topic for the record)')
    .argument('<id>', 'dead letter id')
    .requiredOption('--reason <text>', 'why it is dropped')
    .option('--by <operator>', 'who (default: $GATEWAY_OPERATOR or $USER)')
    .action(run(async (conn, id: string, opts: { reason: string; by?: string }) => {
      const found = find(await conn.letters(), id);
      if (found.status !== 'open') throw new CliError(`Dead letter ${id} is already ${found.status}.`);
      return resolve(conn, found, 'discarded', opts.by, opts.reason);
    }));
}
