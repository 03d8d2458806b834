// Which errors say "the infrastructure is away, try again" and which say "this record cannot be
// processed": the first are retried for as long as it takes, the second are given a few tries and
// then dead-lettered (libs/kafka/src/stage-runner.ts).
import { derivedEventId, type EventCodec, type RecordDeadLettered } from '@gw/events';
import type { ConsumedRecord, OutgoingRecord, RecordFailure } from '@gw/kafka';
import { describeError } from '@gw/observability';
import { ConnectionError } from '@gw/db';

// SQLSTATE classes and codes of a database that is unreachable, restarting, overloaded or busy.
const TRANSIENT_SQL_CLASSES = ['08', '53', '58'];
const TRANSIENT_SQL_CODES = new Set(['57P01', '57P02', '57P03', '57P05', '40001', '40P01', '55P03', '55006']);
// Node and undici errors of a connection that could not be made or was lost.
const TRANSIENT_SYSTEM_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);
// node-postgres and slonik report a lost or unobtainable connection, or a pool closing for a
// restart, with these messages and no code (slonik keeps node-postgres's error as the cause).
const TRANSIENT_PG_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|not queryable|connection is closed|Query read timeout|Backend has been terminated|Connection pool (is being terminated|has ended|is being shut down|has been shut down)/i;
// The schema registry client reports a network failure as an HTTP 400/408 whose text is the socket error.
const NETWORK_TEXT = /ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|socket hang up|Timeout \(\d+ms\)|fetch failed/i;

function isTransientOne(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code, status, message } = error as { name?: string; code?: unknown; status?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code === 'string') {
    if (/^[0-9A-Z]{5}$/.test(code) && (TRANSIENT_SQL_CLASSES.includes(code.slice(0, 2)) || TRANSIENT_SQL_CODES.has(code))) return true;
    if (TRANSIENT_SYSTEM_CODES.has(code)) return true;
  }
  // Every kafkajs error is about the cluster, not the record (a fenced producer included: the
  // batch is retried and the fence ends the process's hold on the partition at the next rebalance).
  if (typeof name === 'string' && name.startsWith('KafkaJS')) return true;
  if (name === 'ResponseError' && typeof status === 'number') return status >= 500 || status === 408 || status === 429 || NETWORK_TEXT.test(text);
  if (TRANSIENT_PG_MESSAGES.test(text)) return true;
  // Slonik could not open a connection (its cause says why: refused, timed out, starting up).
  if (error instanceof ConnectionError) return true;
  return false;
}

/** An error that says nothing about the record being processed: the infrastructure is away or busy. */
export function isTransient(error: unknown): boolean {
  // Follow the cause chain (fetch failed → ECONNREFUSED; aggregate errors of a pool).
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (isTransientOne(current)) return true;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every(isTransient)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The dead letter of a record a stage gave up on: the record whole, where it was, and why. */
export async function deadLetterRecord(codec: EventCodec, stage: string, record: ConsumedRecord, failure: RecordFailure, now = Date.now()): Promise<OutgoingRecord[]> {
  // Derived from the stage and position: the same record given up twice (a redelivered batch) is one dead letter.
  const id = derivedEventId(`${stage}:${record.topic}:${record.partition}:${record.offset}`, 'dead-letter');
  const letter: RecordDeadLettered = {
    event_id: id,
    correlation_id: record.headers['correlation-id'] ?? id,
    occurred_at: now,
    customer_id: record.key ?? '',
    instance_id: '',
    stage,
    error: describeError(failure.error),
    tries: failure.tries,
    source_topic: record.topic,
    source_partition: record.partition,
    source_offset: record.offset,
    source_timestamp: record.timestamp,
    source_key: record.key,
    source_value: record.value,
    source_headers: record.headers,
  };
  return [await codec.encode('RecordDeadLettered', letter)];
}
