-- Up Migration
-- The trace a webhook delivery belongs to (docs/architecture.md "Traces"): the W3C traceparent of
-- the enqueue stage's span of its gateway event. A delivery waits in this table between that
-- stage and the worker (for a retry, hours), so the trace context is kept with the row, and the
-- worker's POST to the customer continues the send's trace. NULL: queued without one (tracing
-- off, or re-queued by `webhook recover`); the post then starts a trace of its own.
ALTER TABLE webhook_deliveries ADD COLUMN trace_parent text;

-- Down Migration
ALTER TABLE webhook_deliveries DROP COLUMN trace_parent;
