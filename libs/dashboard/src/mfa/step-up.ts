// Step-up: sensitive changes (creating an API key, rotating a secret, changing a role, inviting a
// member, creating a PBX integration, changing a webhook's destination, replacing the second
// factor) ask for a TOTP code again, in the same form, even in a signed-in session. Every check
// counts toward the account's lockout exactly as a sign-in code does (counted before the check,
// cleared by a right code), a locked account passes none, and each code works once. The routes
// also rate-limit their forms per user (stepUpRateLimit).
import type { FastifyRequest } from 'fastify';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { clearFailures, countAttempt, isLocked } from '../users.ts';
import { PageError } from '../sessions/guards.ts';
import type { SignedIn } from '../sessions/store.ts';
import { secondFactorMatches } from './totp.ts';

/** The configuration's defaults, for an account object made without the sessions plugin. */
const DEFAULT_LOCKOUT = { after: 5, ms: 15 * 60_000 };

/** What a user without two-factor authentication is told: these changes need it (developers included). */
export const ENROL_FIRST = new PageError(403, 'Two-factor authentication first', 'This change asks for a code from an authenticator app, so it needs two-factor authentication, whatever your role. Set it up first (it takes a minute), then come back.', { href: '/account/mfa', label: 'Set up two-factor authentication' });

/** A route option: at most `perMinute` code checks per signed-in user and minute (by address before sign-in). */
export const stepUpRateLimit = (perMinute: number) => ({ rateLimit: { max: perMinute, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.account?.user_id ?? request.ip } });

/** Throws a 403 page unless `code` is the user's current TOTP code (or an unused recovery code). */
export async function requireStepUp(pool: Pool, box: SecretBox, account: SignedIn, code: unknown): Promise<void> {
  if (!(await stepUpPasses(pool, box, account, code))) {
    throw new PageError(403, 'Code needed', 'This change asks for your current authenticator code. Go back and enter it with the form.');
  }
}

/**
 * Whether `code` is the user's current, unused TOTP code (or an unused recovery code), for a form
 * that says so itself (re-rendered with a 400 and its fields kept). A user who has not set up
 * two-factor authentication gets the 403 page that sends them to do it; a locked account gets a
 * 429 page.
 */
export async function stepUpPasses(pool: Pool, box: SecretBox, account: SignedIn, code: unknown): Promise<boolean> {
  if (!account.mfa_enrolled) throw ENROL_FIRST;
  const attempt = await countAttempt(pool, { userId: account.user_id }, account.lockout ?? DEFAULT_LOCKOUT);
  if (!attempt?.user.totp_secret_enc) throw ENROL_FIRST;
  if (!attempt.allowed) throw new PageError(429, 'Account locked', 'Too many wrong codes in a row: this account is locked for a while. Try again later.');
  const passes = typeof code === 'string' && code.trim() !== '' && (await secondFactorMatches(pool, box, attempt.user, code));
  if (passes) await clearFailures(pool, attempt.user.id);
  else if (isLocked(attempt.user)) throw new PageError(429, 'Account locked', 'Too many wrong codes in a row: this account is now locked for a while. Try again later.');
  return passes;
}

/** What a form says when its code was missing or wrong. */
export const STEP_UP_REFUSED = 'Enter the current 6-digit code from your authenticator app (or a recovery code) to confirm this change. Each code works once: wait for the next one if you just used it.';
