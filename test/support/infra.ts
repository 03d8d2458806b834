import { randomBytes } from 'node:crypto';
import { loadConfig } from '@gw/config';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dropDatabase, ensureDatabase, migrate } from '@gw/db';

/**
 * The real infrastructure the int and e2e tiers run against, started by `make test`
 * (deploy/local/infra.sh). Each test file gets its own database and topic prefix, so runs and
 * files never see each other's state.
 */
export const baseConfig = loadConfig();

export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export interface Isolation {
  suffix: string;
  databaseUrl: string;
  topicPrefix: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

async function assertReachable(url: string, what: string, hint: string): Promise<void> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(5000) });
  } catch {
    throw new Error(`${what} is not reachable at ${url}. ${hint}`);
  }
}

/**
 * A fresh database and topic prefix. `root`: another checkout of this repository (the bench runs
 * the commit before a change beside it): its own migrations make the schema.
 */
export async function isolate(root?: string): Promise<Isolation> {
  // A constant answer, not /subjects: that lists every subject every run ever registered, and on a
  // machine that keeps its registry it outgrew the probe's timeout under load.
  await assertReachable(`${baseConfig.schemaRegistryUrl}/schemas/types`, 'The schema registry', 'Start the infrastructure with `bash deploy/local/infra.sh start` (or run `make test`).');
  const suffix = uniqueSuffix();
  const url = new URL(baseConfig.databaseUrl);
  url.pathname = `/gw_test_${suffix}`;
  const databaseUrl = url.toString();
  if (root) {
    await ensureDatabase(databaseUrl);
    await promisify(execFile)(`${root}/services/gatewayctl/bin/gatewayctl.js`, ['migrate'], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, GATEWAY_ENV: 'production' } });
  } else {
    await migrate(databaseUrl);
  }
  const topicPrefix = `t${suffix}.`;
  return {
    suffix,
    databaseUrl,
    topicPrefix,
    env: {
      DATABASE_URL: databaseUrl,
      TOPIC_PREFIX: topicPrefix,
      KAFKA_BROKERS: baseConfig.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: baseConfig.schemaRegistryUrl,
      GATEWAY_SECRET_KEY: `test-secret-${suffix}`,
      // Set, so gatewayctl in tests never reads a developer's local stack settings (.run/local.env).
      GATEWAY_ENV: 'production',
      CONSUMER_SESSION_TIMEOUT_MS: '6000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    },
    cleanup: () => dropDatabase(databaseUrl),
  };
}
