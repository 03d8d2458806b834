import pino, { type Logger } from 'pino';

// kafkajs's advice about its v2 partitioner is not news to anyone reading a benchmark.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';

/** The bench's own clients log errors only, to stderr, so the report on stdout stays readable. */
export function benchLogger(name: string): Logger {
  return pino({ level: process.env.BENCH_LOG_LEVEL ?? 'error', base: { service: name } }, pino.destination(2));
}
