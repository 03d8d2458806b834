// Pages are rendered on the server with eta through @fastify/view, in one layout; the stylesheet
// and the little script of the live parts are served from ./assets (no CDN, no build step).
// `reply.page` renders a template with what every page needs: the signed-in account, a CSRF
// token for its forms, and no caching of anything that may show a secret.
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { processSetting } from '@gw/config';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { can, type Permission } from '../roles/permissions.ts';
import { csrfUserInfo } from './csrf.ts';

// Templates sit in their slice's folder (accounts/sign-in.eta); the layout, the error page and
// the partials every slice shares in views/. A page is named by its path from the package's src.
const VIEWS = fileURLToPath(new URL('../', import.meta.url));
const ASSETS = fileURLToPath(new URL('../assets/', import.meta.url));

/**
 * Every page, by its template's path from src (`accounts/sign-in` is accounts/sign-in.eta), with
 * the data its template reads: `reply.page` takes exactly that. Each slice adds its own pages in
 * its `pages.ts` (an interface merged into this one), so this module imports no slice.
 */
export interface DashboardPages {
  'views/error': { title: string; message: string; link: { href: string; label: string } | null };
  'views/landing': { title: string };
}

declare module 'fastify' {
  interface FastifyReply {
    /** Renders the page's template in the layout (status as set on the reply, 200 by default). */
    page<P extends keyof DashboardPages>(template: P, data: DashboardPages[P]): Promise<FastifyReply>;
  }
}

export const viewsPlugin = fp(async (app: FastifyInstance) => {
  // autoEscape: `<%= %>` escapes; only `<%~ %>` (used for the layout's body) writes raw HTML.
  const eta = new Eta({ views: VIEWS, autoEscape: true, cache: processSetting('NODE_ENV') === 'production' });
  await app.register(fastifyView, { engine: { eta }, templates: VIEWS });
  await app.register(fastifyStatic, { root: ASSETS, prefix: '/assets/', decorateReply: false, index: false, maxAge: '1h' });
  app.decorateReply('page', async function page(this: FastifyReply, template: string, data: object) {
    const request = this.request;
    // Outside the dashboard's scope (no CSRF plugin) a page has no forms to protect.
    const csrf = typeof this.generateCsrf === 'function' ? this.generateCsrf({ userInfo: csrfUserInfo(request) }) : '';
    const account = request.account ?? null;
    // What the signed-in member's role allows: the layout shows only the links it may follow.
    const allowed = (permission: Permission) => Boolean(account?.role && can(account.role, permission));
    const html = await this.viewAsync(`${template}.eta`, { account, csrf, path: request.url.split('?')[0], allowed, ...data });
    return this.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  });
}, { name: 'dashboard-views' });
