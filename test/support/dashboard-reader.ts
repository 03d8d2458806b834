// A dashboard member who only reads pages, over plain HTTP against a running stack (no browser):
// for e2e tests that need to see what a page says. The member is a viewer, made as an invitation
// would leave one; viewers read without a second factor (sessions/guards.ts), so the sign-in is
// the password form alone, with its CSRF token and cookies kept as a browser keeps them.
import { createPool } from '@gw/db';
import { addMembership, createUser, hashPassword } from '@gw/dashboard/seeding';
import type { Stack } from './stack.ts';

const PASSWORD = 'a long enough password for reading';

export interface DashboardReader {
  /** GET a page as the signed-in member; redirects are not followed. */
  get(path: string): Promise<{ status: number; html: string }>;
}

/** A viewer of `customerId`, signed in. */
export async function dashboardReader(stack: Stack, customerId: string): Promise<DashboardReader> {
  const email = `reader-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}@clinic.example`;
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    const userId = await createUser(pool, email, await hashPassword(PASSWORD), { verified: true });
    await addMembership(pool, userId, customerId, 'viewer');
  } finally {
    await pool.end();
  }
  const cookies = new Map<string, string>();
  const request = async (path: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (cookies.size > 0) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method: init.method ?? 'GET',
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return { status: response.status, html: await response.text() };
  };
  const form = await request('/sign-in');
  const csrf = /name="_csrf"[^>]*value="([^"]*)"/.exec(form.html)?.[1];
  if (!csrf) throw new Error(`the sign-in page (${form.status}) has no CSRF token`);
  const signedIn = await request('/sign-in', { method: 'POST', form: { email, password: PASSWORD, next: '/usage', _csrf: csrf.replace(/&amp;/g, '&') } });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  return { get: (path) => request(path) };
}
