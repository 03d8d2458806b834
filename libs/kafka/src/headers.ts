import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { ConsumedRecord } from './types.ts';

export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  }
  return out;
}

/** The broker-neutral shape of a fetched message. */
export function toConsumed(topic: string, partition: number, message: KafkaMessage): ConsumedRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key ? message.key.toString('utf8') : null,
    value: message.value,
    headers: decodeHeaders(message.headers),
    timestamp: message.timestamp,
  };
}

