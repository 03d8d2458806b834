-- Up Migration
-- Each policy fact is folded once, by its event id. Facts derived from another record (a delivery
-- outcome, an opt-out) carry ids derived from their source, so a stage that re-emits its outputs
-- after a crash (KAFKA_EXACTLY_ONCE=idempotent) appends an identical copy at a later offset: the
-- offset fence cannot tell it is the same fact, this table can. Without it a delivery outcome
-- re-emitted after a crash counted twice towards an instance's delivery quality.
CREATE TABLE policy_facts (
  event_id text PRIMARY KEY
);

DROP FUNCTION policy_apply_batch(text, int, bigint, bigint, text, text, bigint, json, text[], json, text[], text[], int[], json);

-- As in 1700000000800, plus p_fact_ids (SQLSTATE GWC02 when a fact was folded before: the
-- consumer redoes the batch on its locking path, which skips it).
CREATE FUNCTION policy_apply_batch(
  p_topic text,
  p_partition int,
  p_expected_offset bigint,
  p_next_offset bigint,
  p_expected_head text,
  p_head text,
  p_last_log_id bigint,
  p_entries json,
  p_state_ids text[],
  -- One JSON array, in the order of p_state_ids (a json[] parameter would be escaped element by element).
  p_states json,
  p_quota_customers text[],
  p_quota_windows text[],
  p_quota_used int[],
  p_suppressions json,
  -- The event ids of the facts this batch folded: a copy of a fact at another offset (a stage
  -- that re-emitted its outputs after a crash) is folded once.
  p_fact_ids text[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  s record;
BEGIN
  UPDATE policy_offsets SET next_offset = p_next_offset
   WHERE topic = p_topic AND partition = p_partition AND next_offset = p_expected_offset;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n = 0 AND p_expected_offset = 0 THEN
    INSERT INTO policy_offsets (topic, partition, next_offset) VALUES (p_topic, p_partition, p_next_offset)
    ON CONFLICT (topic, partition) DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
  END IF;
  IF n <> 1 THEN
    RAISE EXCEPTION 'partition % of % is no longer at offset %', p_partition, p_topic, p_expected_offset USING ERRCODE = 'GWF01';
  END IF;

  IF p_last_log_id IS NOT NULL THEN
    INSERT INTO policy_chain AS c (partition, head_hash, last_log_id) VALUES (p_partition, p_head, p_last_log_id)
    ON CONFLICT (partition) DO UPDATE SET head_hash = EXCLUDED.head_hash, last_log_id = EXCLUDED.last_log_id
     WHERE c.head_hash = p_expected_head;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n <> 1 THEN
      RAISE EXCEPTION 'the chain of partition % no longer ends at %', p_partition, p_expected_head USING ERRCODE = 'GWF01';
    END IF;
  END IF;

  INSERT INTO policy_log (log_id, command_id, event_id, customer_id, instance_id, message_id, recipient,
    message_purpose, message_digest, decision, error_code, error_message, reasons, policy_version,
    decided_at, decision_event, partition_chain, prev_hash, entry_hash)
  SELECT e.log_id, e.command_id, e.event_id, e.customer_id, e.instance_id, e.message_id, e.recipient,
    e.message_purpose, e.message_digest, e.decision, e.error_code, e.error_message, e.reasons, e.policy_version,
    to_timestamp(e.occurred_at / 1000.0), e.decision_event, e.partition_chain, e.prev_hash, e.entry_hash
  FROM json_to_recordset(p_entries) AS e(log_id bigint, command_id text, event_id text, customer_id text,
    instance_id text, message_id text, recipient text, message_purpose text, message_digest text, decision text,
    error_code text, error_message text, reasons jsonb, policy_version text, occurred_at bigint,
    decision_event jsonb, partition_chain int, prev_hash text, entry_hash text)
  ON CONFLICT DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n <> json_array_length(p_entries) THEN
    RAISE EXCEPTION 'a command of this batch was decided before' USING ERRCODE = 'GWC01';
  END IF;

  IF cardinality(p_fact_ids) > 0 THEN
    INSERT INTO policy_facts (event_id) SELECT unnest(p_fact_ids) ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n <> cardinality(p_fact_ids) THEN
      RAISE EXCEPTION 'a fact of this batch was folded before' USING ERRCODE = 'GWC02';
    END IF;
  END IF;

  IF cardinality(p_state_ids) > 0 THEN
    INSERT INTO policy_state (customer_id, state, updated_at)
    SELECT t.id, st.value, now()
      FROM unnest(p_state_ids) WITH ORDINALITY AS t(id, n)
      JOIN json_array_elements(p_states) WITH ORDINALITY AS st(value, n) USING (n)
    ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state, updated_at = now();
  END IF;

  IF cardinality(p_quota_customers) > 0 THEN
    INSERT INTO quota_usage (customer_id, window_key, used)
    SELECT * FROM unnest(p_quota_customers, p_quota_windows, p_quota_used)
    ON CONFLICT (customer_id, window_key) DO UPDATE SET used = quota_usage.used + EXCLUDED.used;
  END IF;

  -- In order: an add and a remove of one recipient must not swap.
  FOR s IN SELECT x.* FROM json_array_elements(p_suppressions) WITH ORDINALITY AS a(value, ord),
      json_to_record(a.value) AS x(op text, customer_id text, recipient text, source text, reason text, created_by text, at bigint)
    ORDER BY a.ord
  LOOP
    IF s.op = 'add' THEN
      INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at)
      VALUES (s.customer_id, s.recipient, s.source, s.reason, s.created_by, to_timestamp(s.at / 1000.0))
      ON CONFLICT (customer_id, recipient, source) DO UPDATE
        SET reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at;
    ELSE
      DELETE FROM suppressions WHERE customer_id = s.customer_id AND recipient = s.recipient AND source = s.source;
    END IF;
  END LOOP;
END;
$$;

-- Down Migration
DROP FUNCTION policy_apply_batch(text, int, bigint, bigint, text, text, bigint, json, text[], json, text[], text[], int[], json, text[]);
DROP TABLE policy_facts;
