-- Up Migration
-- The number guard of each instance in figures (issue 27): guardSummary of the folded policy state,
-- written by the policy consumer for every instance a batch touched (and by `gatewayctl
-- projections rebuild` the same way). Figures are as of updated_at, the time of the instance's
-- latest folded event (the command's clock). Read by the dashboard's usage page and gatewayctl.
CREATE TABLE instance_guard (
  customer_id                text NOT NULL,
  instance_id                text PRIMARY KEY,
  first_connected_at         timestamptz NULL,
  age_days                   integer NULL,
  warm_up_allowance_today    integer NULL,
  first_contacts_today       integer NOT NULL DEFAULT 0,
  first_contacts_left_today  integer NULL,
  restricted_until           timestamptz NULL,
  restriction_signal         text NULL,
  restriction_signals        integer NOT NULL DEFAULT 0,
  updated_at                 timestamptz NOT NULL
);
CREATE INDEX instance_guard_customer_idx ON instance_guard (customer_id);

-- Down Migration
DROP TABLE instance_guard;
