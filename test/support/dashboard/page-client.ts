// For the dashboard's route tests: a browser's part in app.inject terms. It keeps cookies as a
// browser does (set, replaced, cleared), reads the CSRF token out of the page's form, and sends
// forms url-encoded; it never follows redirects, so tests see each one.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { sql, type Queryable } from '@gw/db';
import { linkIn, type MailCatcher } from '../mail-catcher.ts';

export interface Page {
  status: number;
  location: string | undefined;
  html: string;
  response: LightMyRequestResponse;
}

/** The value of a form field (`name="…" value="…"`) in a page, HTML entities undone. */
export function field(html: string, name: string): string | null {
  const match = new RegExp(`name="${name}"[^>]*value="([^"]*)"`).exec(html);
  return match ? unescape(match[1]!) : null;
}

/** The text of the element with this id. */
export function textOf(html: string, id: string): string | null {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return match ? unescape(match[1]!.trim()) : null;
}

const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * Each TOTP code works once per user (mfa/totp.ts): a test that is not about that would otherwise
 * wait up to 30 s for the next code after each use. For users made by these helpers (registered
 * below), `totpNow` first forgets the user's last used step, as if the next period had come.
 * Tests of the single use itself send `generate({ secret })` twice instead.
 */
const codeOwners = new Map<string, string>();
let stepLedger: Queryable | null = null;

/** The database whose `users.totp_last_step` totpNow resets (the API fixture sets it). */
export function useStepLedger(pool: Queryable | null): void {
  stepLedger = pool;
}

/** Registers the user (by email) whose secret this is, for totpNow. */
export function ownsSecret(secret: string, email: string): void {
  codeOwners.set(secret, email);
}

export async function totpNow(secret: string): Promise<string> {
  const email = codeOwners.get(secret);
  if (stepLedger && email) await stepLedger.query(sql.typeAlias('void')`UPDATE users SET totp_last_step = NULL WHERE email = ${email}`);
  return generate({ secret });
}

let inbox: MailCatcher | null = null;

/** The mail catcher the app sends to (the API fixture sets it): sign-up helpers read their links there. */
export function useInbox(catcher: MailCatcher | null): void {
  inbox = catcher;
}

/** The catcher set by the fixture (tests read notices from it). */
export function mailCatcher(): MailCatcher {
  if (!inbox) throw new Error('no mail catcher: use the API fixture');
  return inbox;
}

/** Confirms the address by the link in the newest verification mail to it, as its owner would. */
export async function verifyEmail(client: PageClient, email: string): Promise<Page> {
  const mail = await mailCatcher().waitFor(email, /Confirm your email address/);
  const path = new URL(linkIn(mail, '/verify-email/')).pathname;
  return client.submit(path, path, {});
}

export class PageClient {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  async get(url: string): Promise<Page> {
    return this.page(await this.app.inject({ method: 'GET', url, headers: this.headers({ accept: 'text/html' }) }));
  }

  /** Sends a form as the page at `from` would: its CSRF token added (unless `_csrf` is given, or null to leave it out). */
  async submit(from: string, action: string, fields: Record<string, string>, options: { csrf?: string | null } = {}): Promise<Page> {
    const csrf = options.csrf === undefined ? field((await this.get(from)).html, '_csrf') : options.csrf;
    return this.post(action, { ...fields, ...(csrf === null ? {} : { _csrf: csrf ?? '' }) });
  }

  async post(url: string, fields: Record<string, string>): Promise<Page> {
    const body = new URLSearchParams(fields).toString();
    return this.page(await this.app.inject({ method: 'POST', url, payload: body, headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }) }));
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return cookie ? { ...extra, cookie } : extra;
  }

  private page(response: LightMyRequestResponse): Page {
    for (const c of response.cookies) {
      const expired = c.expires !== undefined && new Date(c.expires).getTime() <= Date.now();
      if (expired || c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const location = response.headers.location;
    return { status: response.statusCode, location: typeof location === 'string' ? location : undefined, html: response.body, response };
  }
}

/** Signs up a new organisation and its owner, and enrols MFA; returns the client (signed in) and the TOTP secret. */
export async function signUpWithMfa(app: FastifyInstance, input: { organisation?: string; email?: string; password?: string } = {}) {
  const client = new PageClient(app);
  const email = input.email ?? `owner-${Math.random().toString(36).slice(2)}@example.test`;
  const password = input.password ?? 'correct horse battery';
  const signUp = await client.submit('/sign-up', '/sign-up', { organisation: input.organisation ?? 'Acme Clinics', email, password });
  if (signUp.status !== 303) throw new Error(`sign-up answered ${signUp.status}`);
  // The address is proved from the mail first, then the owner signs in.
  const verified = await verifyEmail(client, email);
  if (verified.status !== 303) throw new Error(`verifying the address answered ${verified.status}`);
  const signIn = await client.submit('/sign-in', '/sign-in', { email, password });
  if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
  const enrol = await client.get('/account/mfa');
  const secret = textOf(enrol.html, 'totp-secret');
  if (!secret) throw new Error('the enrolment page shows no secret');
  const done = await client.submit('/account/mfa', '/account/mfa', { pending: field(enrol.html, 'pending')!, code: await totpNow(secret) }, { csrf: field(enrol.html, '_csrf') });
  if (done.status !== 200) throw new Error(`enrolment answered ${done.status}`);
  ownsSecret(secret, email);
  return { client, email, password, secret, recoveryCodes: [...done.html.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!) };
}
