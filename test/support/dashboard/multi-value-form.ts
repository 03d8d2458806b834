// For forms that send one name several times (checkboxes): PageClient.submit takes one value per
// name. This sends the fields in order, with the CSRF token of the page at `from` and the
// client's cookies, as a browser sends such a form.
import type { FastifyInstance } from 'fastify';
import { field, type Page, type PageClient } from './page-client.ts';

export async function submitFields(app: FastifyInstance, client: PageClient, from: string, action: string, fields: Array<[string, string]>): Promise<Page> {
  const csrf = field((await client.get(from)).html, '_csrf') ?? '';
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const response = await app.inject({
    method: 'POST',
    url: action,
    payload: new URLSearchParams([['_csrf', csrf], ...fields]).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie },
  });
  const location = response.headers.location;
  return { status: response.statusCode, location: typeof location === 'string' ? location : undefined, html: response.body, response };
}
