import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRequestTimeout } from './request-timeout.ts';

describe('the request time limit of the int and e2e tiers', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // /slow never answers; anything else answers at once.
    server = createServer((request, response) => {
      if (request.url !== '/slow') response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('names the request that got no answer in time', async () => {
    const limited = withRequestTimeout(fetch, 200);
    await expect(limited(`${url}/slow`, { method: 'POST', body: '{}' })).rejects.toThrow(`POST ${url}/slow gave no answer within 200 ms`);
  });

  it('leaves answered requests, and requests with a signal of their own, alone', async () => {
    const limited = withRequestTimeout(fetch, 200);
    expect(await (await limited(`${url}/fast`)).text()).toBe('ok');
    const own = new AbortController();
    const pending = limited(`${url}/slow`, { signal: own.signal });
    setTimeout(() => own.abort(new Error('aborted by the caller')), 400);
    await expect(pending).rejects.toThrow('aborted by the caller');
  });
});
