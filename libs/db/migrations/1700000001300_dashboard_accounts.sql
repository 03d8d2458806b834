-- Up Migration
-- Dashboard accounts (docs/dashboard.md): people who sign in, the customers they belong to and
-- their role there, their server-held sessions, MFA and invitations. Secrets are stored only as
-- hashes (passwords: argon2id; session ids, recovery codes, invite tokens: SHA-256) or sealed
-- (the TOTP secret, which must be read back to check a code).
CREATE TABLE users (
  id                 text PRIMARY KEY,
  email              text NOT NULL,
  password_hash      text NOT NULL,
  totp_secret_enc    text,
  mfa_enrolled_at    timestamptz,
  failed_sign_ins    integer NOT NULL DEFAULT 0,
  locked_until       timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_idx ON users (lower(email));

CREATE TABLE memberships (
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  customer_id  text NOT NULL REFERENCES customers(id),
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'compliance', 'viewer')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, customer_id)
);
CREATE INDEX memberships_customer_idx ON memberships (customer_id);

CREATE TABLE dashboard_sessions (
  id_hash        bytea PRIMARY KEY,
  user_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  customer_id    text REFERENCES customers(id),
  -- 'password': the password was right and a TOTP code is still owed; 'full': signed in.
  stage          text NOT NULL CHECK (stage IN ('password', 'full')),
  -- When this session last proved a TOTP code (sign-in or step-up).
  mfa_at         timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id);

CREATE TABLE recovery_codes (
  user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash  bytea NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE invites (
  token_hash   bytea PRIMARY KEY,
  customer_id  text NOT NULL REFERENCES customers(id),
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('admin', 'developer', 'compliance', 'viewer')),
  invited_by   text NOT NULL REFERENCES users(id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz
);
CREATE INDEX invites_customer_idx ON invites (customer_id);

-- Down Migration
DROP TABLE invites;
DROP TABLE recovery_codes;
DROP TABLE dashboard_sessions;
DROP TABLE memberships;
DROP TABLE users;
