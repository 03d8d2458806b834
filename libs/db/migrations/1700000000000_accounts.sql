-- Up Migration
-- Customers, their paired instances and API keys: the records behind authentication and ownership.
CREATE TABLE customers (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE instances (
  id                   text PRIMARY KEY,
  customer_id          text NOT NULL REFERENCES customers(id),
  name                 text NOT NULL,
  manager_url          text NOT NULL,
  manager_instance     text NOT NULL,
  -- The manager's apikey, sealed with AES-256-GCM; never stored or shown in plain text.
  manager_api_key_enc  text NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (customer_id, name)
);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  customer_id  text NOT NULL REFERENCES customers(id),
  name         text NOT NULL,
  -- SHA-256 of the high-entropy secret part; the key itself is shown once at creation.
  secret_hash  bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE INDEX api_keys_customer_idx ON api_keys (customer_id);

-- Down Migration
DROP TABLE api_keys;
DROP TABLE instances;
DROP TABLE customers;
