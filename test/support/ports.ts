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
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port found in 20000-31999');
}
