// Passwords: argon2id through @node-rs/argon2 (its defaults: 19 MiB, 2 passes, OWASP's
// recommendation), at least 12 characters.
import { hash, verify } from '@node-rs/argon2';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

export const hashPassword = (password: string) => hash(password);

// An unknown email is checked against this, so it takes as long as a wrong password.
let dummy: Promise<string> | undefined;

/** Whether the password matches; `stored` null (no such user) costs the same and says no. */
export async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  const against = stored ?? (await (dummy ??= hash('not a password of anyone')));
  const matches = await verify(against, password).catch(() => false);
  return matches && stored !== null;
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  return null;
}
