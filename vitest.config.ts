import { configDefaults, defineConfig } from 'vitest/config';
import LongFilesFirst from './test/support/long-files-first.ts';

/** The chaos run stops and starts the local broker every file shares (test/chaos/scenario.ts). */
const STOPS_SHARED_INFRASTRUCTURE = ['test/e2e/chaos.e2e.test.ts'];

// Three tiers by file suffix. Unit tests need nothing; int and e2e tests run against the real
// Kafka broker, schema registry and Postgres that `make test` starts (never mocks). Every int and
// e2e file has its own database, topic prefix and ports. scripts/test.sh runs int files two at a
// time (the machine's two cores; most of an int file's time is spent waiting on Kafka and timers),
// the longest first, and e2e files one at a time (each runs a whole stack of service processes).
export default defineConfig({
  test: {
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['libs/**/*.unit.test.ts', 'services/**/*.unit.test.ts', 'test/**/*.unit.test.ts'],
          // Unit files run in parallel on two cores beside other work; the property-style tests
          // (thousands of random cases against a reference) take seconds there, not milliseconds.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'int',
          include: ['libs/**/*.int.test.ts', 'services/**/*.int.test.ts', 'test/**/*.int.test.ts'],
          setupFiles: ['test/support/setup-request-timeout.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts', 'services/**/*.e2e.test.ts'],
          exclude: [...configDefaults.exclude, ...STOPS_SHARED_INFRASTRUCTURE],
          setupFiles: ['test/support/setup-request-timeout.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // e2e files that stop the shared broker (a fault of theirs): run after the others, alone,
        // so no other file meets their fault.
        test: {
          name: 'e2e-alone',
          include: STOPS_SHARED_INFRASTRUCTURE,
          setupFiles: ['test/support/setup-request-timeout.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
