// Mail the account pages send: the verification link, and the links' absolute addresses (on the
// gateway's public base URL, never on a Host header a client chose).
import type { FastifyRequest } from 'fastify';
import { mails } from '@gw/mail';
import type { DashboardDeps } from '../deps.ts';
import { securityLog } from '../plugins/security-log.ts';
import { issueEmailToken } from './email-tokens.ts';

export const absoluteLink = (publicBaseUrl: string, path: string) => `${publicBaseUrl.replace(/\/+$/, '')}${path}`;

/** A new verification link (the ones before stop working), mailed in the background. */
export async function sendVerification(deps: Pick<DashboardDeps, 'pool' | 'mailer' | 'publicBaseUrl' | 'settings'>, userId: string, email: string): Promise<void> {
  const token = await issueEmailToken(deps.pool, userId, 'verify_email', deps.settings.emailVerifyMs);
  deps.mailer.deliver(email, mails.verifyEmail(absoluteLink(deps.publicBaseUrl, `/verify-email/${token}`), deps.settings.emailVerifyMs));
}

/** The attempt that locked an account: a security line, and a mail to its owner (with the way back). */
export function lockedOutNotice(request: FastifyRequest, deps: Pick<DashboardDeps, 'mailer' | 'publicBaseUrl' | 'settings'>, user: { id: string; email: string }): void {
  securityLog(request, 'account.locked_out', { userId: user.id });
  deps.mailer.deliver(user.email, mails.lockedOut(deps.settings.lockoutMs, absoluteLink(deps.publicBaseUrl, '/forgot-password')));
}
