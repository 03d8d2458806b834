-- Up Migration
-- Dashboard security review (issue 25, docs/dashboard.md "Accounts and security").
-- The last TOTP time step a user's code was accepted for: a code of that step or an earlier one
-- is refused, so each code works once (ASVS 2.8.4). Set by one conditional UPDATE, so two requests
-- with the same code cannot both pass.
ALTER TABLE users ADD COLUMN totp_last_step bigint;
-- When the failure count was last counted: a count whose lock has expired starts again from zero
-- (one wrong try every 15 minutes no longer keeps an account locked).
ALTER TABLE users ADD COLUMN last_failed_at timestamptz;
-- Recovery codes keep their format-independent hash (SHA-256 of the normalised code): codes made
-- before this migration (10 characters, ~50 bits) still verify until used or replaced by a new
-- enrolment; new ones carry 120 bits (ASVS 2.6.2: a plain approved hash is enough at >= 112 bits).
-- `bits` says which kind a row is, so old codes can be found and users asked to renew them.
ALTER TABLE recovery_codes ADD COLUMN bits smallint NOT NULL DEFAULT 50;

-- Down Migration
ALTER TABLE recovery_codes DROP COLUMN bits;
ALTER TABLE users DROP COLUMN last_failed_at;
ALTER TABLE users DROP COLUMN totp_last_step;
