-- Up Migration
-- A customer's requests for higher limits (docs/dashboard.md, "Usage"): asked for on the
-- dashboard's /usage page (permission limits.request), granted or declined by an operator with
-- `gatewayctl limits grant|decline`. Postgres only: the grant itself is the LimitsOverridden
-- fact gatewayctl appends to customer-events (the policy engine's only input), this row only
-- records that it was asked for and how it was decided. Read and written through @gw/accounts
-- (libs/accounts/src/limit-requests.ts).
CREATE TABLE limit_requests (
  id                 text PRIMARY KEY,
  customer_id        text NOT NULL REFERENCES customers(id),
  -- The limits asked for; at least one of the two.
  requested_daily    integer CHECK (requested_daily > 0),
  requested_monthly  integer CHECK (requested_monthly > 0),
  -- What the customer sends and why they need more (shown to the operator).
  reason             text NOT NULL,
  -- The member's email.
  requested_by       text NOT NULL,
  requested_at       timestamptz NOT NULL DEFAULT now(),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'granted', 'declined')),
  -- The operator who decided, when, and what they noted (the customer sees the note).
  decided_by         text,
  decided_at         timestamptz,
  decision_note      text,
  CHECK (requested_daily IS NOT NULL OR requested_monthly IS NOT NULL),
  CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX limit_requests_customer_idx ON limit_requests (customer_id, requested_at DESC);
CREATE INDEX limit_requests_status_idx ON limit_requests (status, requested_at);
-- One pending request at a time per customer: a second one is refused (the dashboard says so).
CREATE UNIQUE INDEX limit_requests_one_pending_idx ON limit_requests (customer_id) WHERE status = 'pending';

-- Down Migration
DROP TABLE limit_requests;
