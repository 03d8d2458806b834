-- Up Migration
-- Webhook signing secret rotation with overlap (docs/webhooks.md, "Rotating the signing secret"):
-- the secret a rotation replaced keeps signing beside the new one until previous_secret_expires_at,
-- so a receiver has that long to switch. Sealed with AES-256-GCM like signing_secret_enc.
ALTER TABLE webhook_endpoints ADD COLUMN previous_signing_secret_enc text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at timestamptz;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_previous_secret_check
  CHECK ((previous_signing_secret_enc IS NULL) = (previous_secret_expires_at IS NULL));

-- Down Migration
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_previous_secret_check;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_expires_at;
ALTER TABLE webhook_endpoints DROP COLUMN previous_signing_secret_enc;
