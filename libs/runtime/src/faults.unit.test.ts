import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { BackendTerminatedError, ConnectionError, StatementTimeoutError, UniqueIntegrityConstraintViolationError } from '@gw/db';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { isTransient } from './faults.ts';

// node-postgres's DatabaseError carries the SQLSTATE as `code`; slonik wraps some of them, keeping it as the cause.
const sqlError = (code: string, message = 'x') => Object.assign(new Error(message), { name: 'error', code });
const registryError = (status: number, message: string) => Object.assign(new Error(message), { name: 'ResponseError', status });

describe('isTransient: the infrastructure is away (retried without limit) or the record is bad (dead-lettered)', () => {
  it.each([
    ['Postgres restarting', sqlError('57P01', 'terminating connection due to administrator command')],
    ['Postgres refusing connections', sqlError('57P03')],
    ['a lost connection', sqlError('08006')],
    ['too many connections', sqlError('53300')],
    ['a deadlock', sqlError('40P01')],
    ['node-postgres losing its connection', new Error('Connection terminated unexpectedly')],
    ['no new connection in time', new Error('timeout exceeded when trying to connect')],
    ['slonik: the backend terminated', new BackendTerminatedError(new Error('Connection terminated'))],
    ['an SQLSTATE in the cause of a slonik error', new StatementTimeoutError(sqlError('57P01'))],
    ['slonik: no connection could be opened', new ConnectionError('timeout expired', { cause: new Error('timeout expired') })],
    ['slonik: the pool closing for a restart', new Error('Connection pool is being terminated.')],
    ['a refused socket', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['fetch failing on a refused socket', new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) })],
    ['the broker unreachable', new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')],
    ['the broker gone after retries', new KafkaJSNumberOfRetriesExceeded(new Error('x'), { retryCount: 8, retryTime: 100 })],
    ['a broker protocol error', new KafkaJSProtocolError('NOT_LEADER_OR_FOLLOWER')],
    ['the registry down', registryError(503, 'Confluent_Schema_Registry - Service Unavailable')],
    ['the registry unreachable', registryError(400, 'Confluent_Schema_Registry - Error, status 400: connect ECONNREFUSED 127.0.0.1:18081')],
  ])('transient: %s', (_, error) => expect(isTransient(error)).toBe(true));

  const avroError = (() => {
    try {
      avro.Type.forSchema({ type: 'record', name: 'R', fields: [{ name: 's', type: 'string' }] }).fromBuffer(Buffer.from([0x99]));
    } catch (error) {
      return error;
    }
    throw new Error('decoded garbage');
  })();

  it.each([
    ['a NUL in a jsonb text (22P05)', sqlError('22P05', 'unsupported Unicode escape sequence')],
    ['a value too long (22001)', sqlError('22001')],
    ['a statement cancelled by its time limit (57014)', new StatementTimeoutError(sqlError('57014'))],
    ['a unique constraint (slonik)', new UniqueIntegrityConstraintViolationError(Object.assign(sqlError('23505'), { constraint: 'k' }))],
    ['an Avro body cut short', avroError],
    ['an unknown schema id', registryError(404, 'Confluent_Schema_Registry - Schema 999 not found')],
    ['a bug in a handler', new TypeError("Cannot read properties of undefined (reading 'phone')")],
    ['a thrown string', 'boom'],
  ])('a record problem: %s', (_, error) => expect(isTransient(error)).toBe(false));
});
