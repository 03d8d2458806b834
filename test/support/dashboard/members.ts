// For the dashboard's tests: people of a customer with a given role, enrolled in MFA and signed
// in (through the real sign-in pages), each with their own browser-like client.
import type { FastifyInstance } from 'fastify';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { addMembership, createUser, hashPassword, newRecoveryCodes, newTotpSecret, saveEnrolment, type Role } from '@gw/dashboard/seeding';
import { ownsSecret, PageClient, totpNow, useStepLedger } from './page-client.ts';

export interface TestMember {
  client: PageClient;
  email: string;
  secret: string;
  userId: string;
}

const PASSWORD = 'a long enough test password';

/**
 * A user of `customerId` with `role`, MFA enrolled, signed in with both factors; address proved
 * unless `verified` is false (as an invitation's account is before its owner follows the link).
 */
export async function memberWithRole(app: FastifyInstance, pool: Pool, box: SecretBox, customerId: string, role: Role, options: { verified?: boolean } = {}): Promise<TestMember> {
  const email = `${role}-${Math.random().toString(36).slice(2)}@example.test`;
  const userId = await createUser(pool, email, await hashPassword(PASSWORD), { verified: options.verified ?? true });
  await addMembership(pool, userId, customerId, role);
  const secret = newTotpSecret();
  await saveEnrolment(pool, box, userId, secret, newRecoveryCodes());
  ownsSecret(secret, email);
  useStepLedger(pool);
  const client = new PageClient(app);
  const signIn = await client.submit('/sign-in', '/sign-in', { email, password: PASSWORD });
  if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
  const code = await client.submit('/sign-in/code', '/sign-in/code', { code: await totpNow(secret) });
  if (code.status !== 303) throw new Error(`the code step answered ${code.status}`);
  return { client, email, secret, userId };
}
