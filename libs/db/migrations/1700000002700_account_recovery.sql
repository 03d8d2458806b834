-- Up Migration
-- Accounts a customer can trust and recover (issue 25, docs/dashboard.md "Accounts and security").
-- When the address was proved (a link mailed to it followed, or a password reset through it).
-- Users made before this migration, and users gatewayctl makes (the demo account), count as
-- verified: the column's default. The dashboard's sign-up and invitation forms insert NULL.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz DEFAULT now();
-- The organisation named at sign-up, created (with the user as its owner) only once the address
-- is proved: an address nobody proved makes no customer and appends no fact. NULL afterwards.
ALTER TABLE users ADD COLUMN signup_organisation text;
-- Single-use links mailed to a user: verifying the address, resetting the password. Only the
-- SHA-256 of the token is stored (the link is its only copy); a token is used by one conditional
-- UPDATE (used_at IS NULL AND expires_at > now()), so two clicks cannot both pass.
CREATE TABLE email_tokens (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  purpose     text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX email_tokens_user_idx ON email_tokens (user_id, purpose);
-- The browser a session was opened in, for the account page's list of sessions (as sent; cut to 300).
ALTER TABLE dashboard_sessions ADD COLUMN user_agent text;

-- Down Migration
ALTER TABLE dashboard_sessions DROP COLUMN user_agent;
DROP TABLE email_tokens;
ALTER TABLE users DROP COLUMN signup_organisation;
ALTER TABLE users DROP COLUMN email_verified_at;
