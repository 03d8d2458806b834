import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { ConsumedRecord } from './types.ts';

/** One header's value as text (the first, if repeated), or undefined when absent. */
export function headerValue(headers: IHeaders | undefined, name: string): string | undefined {
  if (!headers || !Object.hasOwn(headers, name)) return undefined;
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
}

export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const name of Object.keys(headers)) {
    const value = headerValue(headers, name);
    if (value !== undefined) out[name] = value;
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

