// Step-up: some changes (creating an API key, rotating a secret, changing a role) ask for a TOTP
// code again, in the same form, even in a signed-in session.
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { findUser } from '../accounts/users.ts';
import { PageError } from '../sessions/guards.ts';
import type { SignedIn } from '../sessions/store.ts';
import { secondFactorMatches } from './totp.ts';

/** Throws a 403 page unless `code` is the user's current TOTP code (or an unused recovery code). */
export async function requireStepUp(pool: Pool, box: SecretBox, account: SignedIn, code: unknown): Promise<void> {
  if (!(await stepUpPasses(pool, box, account, code))) {
    throw new PageError(403, 'Code needed', 'This change asks for your current authenticator code. Go back and enter it with the form.');
  }
}

/**
 * Whether `code` is the user's current TOTP code (or an unused recovery code), for a form that
 * says so itself (re-rendered with a 400 and its fields kept). A user who has not set up
 * two-factor authentication still gets the 403 page that sends them to do it.
 */
export async function stepUpPasses(pool: Pool, box: SecretBox, account: SignedIn, code: unknown): Promise<boolean> {
  const user = await findUser(pool, account.user_id);
  if (!user?.totp_secret_enc) {
    throw new PageError(403, 'Two-factor authentication first', 'Set up two-factor authentication first: this change asks for a code.', { href: '/account/mfa', label: 'Set up two-factor authentication' });
  }
  return typeof code === 'string' && code.trim() !== '' && (await secondFactorMatches(pool, box, user, code));
}

/** What a form says when its code was missing or wrong. */
export const STEP_UP_REFUSED = 'Enter the current 6-digit code from your authenticator app (or a recovery code) to confirm this change.';
