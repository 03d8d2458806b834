import { createServer } from 'node:net';

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports this process has handed out: never handed out again, whether or not they are bound yet. */
const handedOut = new Set<number>();

/**
 * A free loopback port for a service this process is about to start, below Linux's ephemeral
 * range (32768+), so the OS never gives it to an outgoing connection meanwhile. The check frees
 * the port again before the service binds it: without the record of ports handed out, two calls
 * (five services of one stack) could get the same one, and the second service failed with
 * EADDRINUSE. Servers started in-process (simulators, receivers) listen on port 0, in the
 * ephemeral range, so they never meet these.
 */
/**
 * Ports 20000-28999, a slice of them per vitest worker: files run two at a time (scripts/test.sh),
 * each worker its own process with its own record, so two workers drawing from one range could
 * both check a port free before either service bound it. 29000-29299 stay clear for the
 * three-node cluster (deploy/cluster/kafka-cluster.sh: 29093-29095, controllers 29193-29195).
 */
const SLICES = 4;
const SLICE_SIZE = 9_000 / SLICES;

/** The ports worker `poolId` (vitest's VITEST_POOL_ID, 1 up to the workers of the run) draws from: [from, to). */
export function portRange(poolId: number): { from: number; to: number } {
  const slice = Number.isInteger(poolId) && poolId > 0 ? (poolId - 1) % SLICES : 0;
  return { from: 20_000 + slice * SLICE_SIZE, to: 20_000 + (slice + 1) * SLICE_SIZE };
}

const range = portRange(Number(process.env.VITEST_POOL_ID ?? '1'));

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range.from + Math.floor(Math.random() * (range.to - range.from));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port found in ${range.from}-${range.to - 1}`);
}
