// Clear errors, before anything starts, when the infrastructure the bench needs is not there.
import { connect } from 'node:net';
import { createPool, sql, z, type Pool } from '@gw/db';
import { baseConfig } from '../../test/support/infra.ts';

const HINT = 'Start it with `bash deploy/local/infra.sh start all` (or run `make bench`, which starts and stops it).';

function tcp(hostPort: string, timeoutMs = 3000): Promise<void> {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.slice(hostPort.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('timed out'));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.end();
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export async function preflight(): Promise<void> {
  const problems: string[] = [];
  for (const broker of baseConfig.kafkaBrokers) {
    const host = broker.slice(0, broker.lastIndexOf(':'));
    if (host !== '127.0.0.1' && host !== 'localhost') problems.push(`Kafka broker ${broker} is not local; the bench only sends traffic to 127.0.0.1.`);
    await tcp(broker).catch((error) => problems.push(`Kafka is not reachable at ${broker} (${String(error.message ?? error)}). ${HINT}`));
  }
  try {
    const response = await fetch(`${baseConfig.schemaRegistryUrl}/subjects`, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) problems.push(`The schema registry at ${baseConfig.schemaRegistryUrl} answered HTTP ${response.status}. ${HINT}`);
  } catch (error) {
    problems.push(`The schema registry is not reachable at ${baseConfig.schemaRegistryUrl} (${String((error as Error).message)}). ${HINT}`);
  }
  // The server, not the configured database: each run creates (and drops) a database of its own.
  const server = new URL(baseConfig.databaseUrl);
  server.pathname = '/postgres';
  let pool: Pool | undefined;
  try {
    pool = await createPool(server.toString(), { maxConnections: 1, connectTimeoutMs: 5000 });
    await pool.oneFirst(sql.type(z.object({ one: z.number() }))`select 1 AS one`);
  } catch (error) {
    problems.push(`PostgreSQL is not usable at ${server.host} (${String((error as Error).message)}). Start it with 'service postgresql start'.`);
  } finally {
    await pool?.end().catch(() => undefined);
  }
  if (problems.length > 0) throw new PreflightError(problems);
}

export class PreflightError extends Error {
  constructor(readonly problems: string[]) {
    super(`the infrastructure is not ready:\n  - ${problems.join('\n  - ')}`);
  }
}
