// What only a real browser can show about the dashboard's headers: that its CSP really stops a
// script injected into a page, and that no other site can frame it. (The headers themselves,
// CSRF, sessions and the role matrix are tested in-process: services/api/src/dashboard.)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser } from '../support/browser.ts';
import { useStack } from '../support/suite.ts';

// Only the API: it serves every page.
const suite = useStack({ services: ['api'] });
const browser = useBrowser();
const servers: Server[] = [];

afterAll(async () => {
  // The browser may hold a kept-alive connection open: closed here, not waited for.
  await Promise.all(servers.map((s) => new Promise((resolve) => {
    s.close(resolve);
    s.closeAllConnections();
  })));
});

/** Another site, on another origin, serving one page. */
async function otherSite(html: string): Promise<string> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://localhost:${(server.address() as AddressInfo).port}/`;
}

describe('the dashboard in a browser', () => {
  it('runs no inline script: the page has none, and one injected into it is blocked by the CSP', async () => {
    const page = await browser.session.open();
    try {
      const response = await page.goto(`${suite.stack.apiUrl}/sign-in`);
      expect(response?.status()).toBe(200);
      const csp = response!.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      // The page itself: scripts only from files, no event-handler or style attributes.
      const inline = await page.evaluate(() => ({
        scripts: Array.from(document.scripts).filter((s) => !s.src).length,
        handlers: Array.from(document.querySelectorAll('*')).filter((el) => Array.from(el.attributes).some((a) => a.name.startsWith('on'))).length,
        styles: document.querySelectorAll('[style]').length,
      }));
      expect(inline).toEqual({ scripts: 0, handlers: 0, styles: 0 });

      // The same page with a script injected (as an XSS would), served with the real headers.
      await page.route(`${suite.stack.apiUrl}/sign-in`, async (route) => {
        const real = await route.fetch();
        const html = (await real.text()).replace('</main>', '<script>window.__injected = true</script><img src="data:," onerror="window.__handler = true"></main>');
        await route.fulfill({ response: real, body: html });
      });
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${suite.stack.apiUrl}/sign-in`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate(() => ({ script: (window as any).__injected ?? null, handler: (window as any).__handler ?? null }))).toEqual({ script: null, handler: null });
      expect(violations.length, 'the browser reports the blocked script').toBeGreaterThanOrEqual(1);
    } finally {
      await page.close();
    }
  });

  it('cannot be framed by another site', async () => {
    const target = `${suite.stack.apiUrl}/sign-in`;
    const page = await browser.session.open();
    try {
      const response = await page.request.get(target, { headers: { accept: 'text/html' } });
      expect(response.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response.headers()['x-frame-options']).toMatch(/^(DENY|SAMEORIGIN)$/i);

      await page.goto(await otherSite(`<!doctype html><title>Framer</title><iframe id="f" src="${target}" width="600" height="400"></iframe>`));
      const frameElement = await page.locator('#f').elementHandle();
      // The frame is blocked: Chromium puts its error page in place of the dashboard's.
      await expect.poll(async () => (await frameElement!.contentFrame())?.url() ?? '', { timeout: 10_000 }).not.toBe('about:blank');
      const frame = (await frameElement!.contentFrame())!;
      expect(frame.url()).not.toBe(target);
      expect(await frame.locator('form[action="/sign-in"]').count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
