import { createServer } from 'node:net';

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port below Linux's ephemeral range (32768+): a port the OS hands out for
 * outgoing connections could be taken again between this check and the service's listen.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port found in 20000-31999');
}
