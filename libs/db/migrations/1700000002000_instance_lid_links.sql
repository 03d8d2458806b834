-- Up Migration
-- Linked ids (WhatsApp's `@lid` aliases that hide a number) and the connection reports' own time.
-- Both written by the instance-events consumer (services/instance-events/src/store.ts).

-- The phone behind each linked id an instance's manager has shown with it. The canonical lid
-- (`<digits>@lid`); the phone in E.164. The newest report wins (a lid belongs to one account).
CREATE TABLE instance_lid_links (
  instance_id  text NOT NULL,
  lid          text NOT NULL,
  phone        text NOT NULL,
  learned_at   timestamptz NOT NULL,
  PRIMARY KEY (instance_id, lid)
);

-- When the manager says the connection report happened (the envelope's date_time), to order
-- reports that arrive out of order (a late retry). NULL: the report had none; arrival decides.
ALTER TABLE instance_connections ADD COLUMN reported_at timestamptz;

-- Down Migration
ALTER TABLE instance_connections DROP COLUMN reported_at;
DROP TABLE instance_lid_links;
