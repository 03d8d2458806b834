-- Up Migration
-- Instance-manager events refused at the boundary (a malformed JID, a NUL character, an unpaired
-- surrogate, a text too long): recorded with the reason, never mapped. The payload is not kept
-- (it may hold phone numbers and message texts); the digest identifies the envelope.
CREATE TABLE instance_event_rejections (
  instance_id  text NOT NULL,
  digest       text NOT NULL,
  event        text NOT NULL,
  reason       text NOT NULL,
  -- Where it was refused: 'ingest' (the API, before Kafka) or 'instance-events' (the stage, for
  -- records appended before the checks existed).
  stage        text NOT NULL,
  rejected_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, digest)
);

-- One writer for both services: a manager's retry of the same envelope is one rejection.
CREATE FUNCTION record_instance_event_rejection(p_instance text, p_digest text, p_event text, p_reason text, p_stage text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO instance_event_rejections (instance_id, digest, event, reason, stage)
  VALUES (p_instance, p_digest, p_event, p_reason, p_stage)
  ON CONFLICT (instance_id, digest) DO NOTHING
$$;

-- Down Migration
DROP FUNCTION record_instance_event_rejection(text, text, text, text, text);
DROP TABLE instance_event_rejections;
