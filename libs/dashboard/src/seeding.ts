// @gw/dashboard/seeding: what the tests need to put a dashboard member in the database without
// the sign-up pages: a password hash as sign-in checks it, the user, their membership with
// a role, and an enrolled second factor (TOTP secret and recovery codes). The same functions the
// slices use, so a seeded member signs in exactly as one who signed up; the tests import these
// from here, not from the slices' files.
export { hashPassword } from './accounts/passwords.ts';
export { addMembership, createUser } from './users.ts';
export { newRecoveryCodes, newTotpSecret, saveEnrolment } from './mfa/totp.ts';
export type { Role } from './roles/permissions.ts';
