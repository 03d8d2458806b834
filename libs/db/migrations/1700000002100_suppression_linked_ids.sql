-- Up Migration
-- Senders known only by a linked id (WhatsApp's `<digits>@lid`, docs/policy.md "Linked ids"): the
-- policy engine suppresses the number once it learns it, as its own RecipientSuppressed /
-- RecipientUnsuppressed carrying `linkedFrom`. suppression_history keeps that origin in
-- `linked_from` (the linked id, or the number/linked id a lift came from), so the dashboard can
-- say which number a linked id turned out to be. Recipient columns are free text: a linked id
-- fits them as it is. The function that writes it, policy_apply_batch, is the repeatable
-- libs/db/functions/policy_apply_batch.sql, applied after the numbered migrations on every migrate.
ALTER TABLE suppression_history ADD COLUMN linked_from text;
CREATE INDEX suppression_history_linked_idx ON suppression_history (customer_id, linked_from) WHERE linked_from IS NOT NULL;

-- Down Migration
-- policy_apply_batch goes back to 1700000001600's body.
CREATE OR REPLACE FUNCTION policy_apply_batch(
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

  -- Rows as libs/policy-log toLogRow makes them, under the table's own column names.
  INSERT INTO policy_log SELECT * FROM json_populate_recordset(NULL::policy_log, p_entries)
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
      json_to_record(a.value) AS x(op text, customer_id text, recipient text, source text, reason text, created_by text, at bigint,
                                   instance_id text, inbound_message_id text)
    ORDER BY a.ord
  LOOP
    INSERT INTO suppression_history (customer_id, recipient, action, source, reason, created_by, at, instance_id, inbound_message_id)
    VALUES (s.customer_id, s.recipient, CASE WHEN s.op = 'add' THEN 'suppressed' ELSE 'unsuppressed' END, s.source,
            COALESCE(s.reason, ''), COALESCE(s.created_by, ''), to_timestamp(s.at / 1000.0), s.instance_id, s.inbound_message_id);
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
DROP INDEX suppression_history_linked_idx;
ALTER TABLE suppression_history DROP COLUMN linked_from;
