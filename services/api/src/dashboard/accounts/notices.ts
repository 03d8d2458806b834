// Mail the account pages send: the verification link, and the links' absolute addresses (on the
// gateway's public base URL, never on a Host header a client chose).
import type { FastifyRequest } from 'fastify';
import type { Queryable } from '@gw/db';
import { mails, type Mailer } from '@gw/mail';
import { securityLog } from '../plugins/security-log.ts';
import { issueEmailToken } from './email-tokens.ts';

export const absoluteLink = (publicBaseUrl: string, path: string) => `${publicBaseUrl.replace(/\/+$/, '')}${path}`;

/** A new verification link (the ones before stop working), mailed in the background. */
export async function sendVerification(opts: { pool: Queryable; mailer: Mailer; publicBaseUrl: string; emailVerifyMs: number }, userId: string, email: string): Promise<void> {
  const token = await issueEmailToken(opts.pool, userId, 'verify_email', opts.emailVerifyMs);
  opts.mailer.deliver(email, mails.verifyEmail(absoluteLink(opts.publicBaseUrl, `/verify-email/${token}`), opts.emailVerifyMs));
}

/** The attempt that locked an account: a security line, and a mail to its owner (with the way back). */
export function lockedOutNotice(request: FastifyRequest, opts: { mailer: Mailer; publicBaseUrl: string; lockoutMs: number }, user: { id: string; email: string }): void {
  securityLog(request, 'account.locked_out', { userId: user.id });
  opts.mailer.deliver(user.email, mails.lockedOut(opts.lockoutMs, absoluteLink(opts.publicBaseUrl, '/forgot-password')));
}
