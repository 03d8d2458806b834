// Every environment variable the gateway reads, declared once: its name (the key), its kind and
// default (./kinds.ts), and what it does (describe). loadConfig (./index.ts) parses the
// environment with this schema and arranges the values into the config object; a default that
// depends on another setting is worked out there and said here.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { flag, int, intList, list, oneOf, optionalFlag, optionalInt, optionalStr, optionalTrimmed, ratio, secret, str } from './kinds.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** 32 MiB: a WhatsApp photo or voice note in base64 with room to spare (larger media is refused with 413, and retried by the manager). */
export const DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * Per instance: 2,000 events at once (a reconnect's backlog of offline messages, a group's
 * history), then 50 a second: a send makes about five (send.message, three acks, chats.upsert).
 */
export const DEFAULT_INSTANCE_EVENT_RATE = { perSecond: 50, burst: 2_000 };

const MANAGER_KEY_HINT = 'give it the instance manager\'s global API key, or unset it for a local run with the simulator\'s default key.';

export const settingsSchema = z.object({
  // The process and its secrets.
  GATEWAY_ENV: oneOf(['local', 'production'], 'production').describe('`production` refuses to seal or open secrets without GATEWAY_SECRET_KEY; `local` reads the key file.'),
  GATEWAY_SECRET_KEY: optionalStr().describe('The key that seals secrets at rest (libs/security SecretBox; docs/decisions.md "Secrets at rest").'),
  GATEWAY_SECRET_KEY_FILE: str(`${REPO_ROOT}.run/secret.key`).describe('Where the key is read from when GATEWAY_SECRET_KEY is not set (local only).'),
  GATEWAY_SECRET_KEY_ID: optionalStr().describe('The key\'s id (default: derived from the key).'),
  GATEWAY_SECRET_KEYS_PREVIOUS: list([]).describe('Older keys (`[<kid>:]<key>`, comma-separated) that still open values sealed with them.'),
  LOG_LEVEL: str('info').describe('pino level of the services.'),
  STOP_WITH_PARENT_PID: z.string().optional().transform((raw) => {
    const pid = Number(raw);
    return Number.isInteger(pid) && pid > 1 ? pid : null;
  }).describe('Set by a test or bench harness: the service shuts down once this parent is gone (anything but a pid above 1: off).'),

  // Kafka and the schema registry.
  KAFKA_PORT: int(19092).describe('The local broker\'s port, for the default of KAFKA_BROKERS.'),
  KAFKA_BROKERS: optionalStr().describe('Comma-separated host:port (default 127.0.0.1:KAFKA_PORT).'),
  KAFKA_CLIENT_ID: str('chat-gateway').describe('Prefix of every Kafka client id (the service name is appended).'),
  TOPIC_PREFIX: str('gw.').describe('Prefix for every topic and consumer group, so test runs never see each other\'s state.'),
  TOPIC_PARTITIONS: int(6).describe('Partitions of every topic the gateway creates.'),
  TOPIC_REPLICATION_FACTOR: int(1).describe('Replicas of every topic (1 on the single local broker, 3 on a cluster; at least 1).'),
  TOPIC_MIN_INSYNC_REPLICAS: optionalInt().describe('Replicas that must have a record before it is acknowledged (producers use acks=all); default one less than the factor, at least 1.'),
  CONSUMER_SESSION_TIMEOUT_MS: int(10_000).describe('How long the group waits for a silent member before giving its partitions to another.'),
  CONSUMER_INSTANCE_ID: str('0').describe('This process\'s slot in its consumer group; distinct per running instance, kept across restarts.'),
  KAFKA_FETCH_MAX_WAIT_MS: int(50).describe('Upper bound of a consumer fetch\'s wait; bounds the latency of each transactional hop.'),
  KAFKA_FETCH_MIN_BYTES: int(1).describe('Bytes a fetch waits for.'),
  KAFKA_METADATA_MAX_AGE_MS: int(5_000).describe('Cluster metadata (partition leaders) older than this is asked for again (libs/kafka client.ts says why it is short).'),
  STAGE_PARTITIONS_CONCURRENTLY: int(3).describe('Partitions a stage works on at once.'),
  STAGE_RECORD_TRIES: int(3).describe('Tries of one record on its own, after its batch failed, before the stage dead-letters it (at least 1).'),
  LAG_POLL_MS: int(5_000).describe('How often consumer lag is measured for /metrics.'),
  KAFKA_EXACTLY_ONCE: z.string().optional().transform((raw) => (raw === 'transactions' ? 'transactions' : 'idempotent'))
    .describe('`transactions`: stages commit in Kafka transactions; anything else (default `idempotent`): idempotent appends, then offsets.'),
  APPEND_QUEUE_LIMIT: int(10_000).describe('Records waiting to be appended in one process at most; past it requests are refused at once (overloaded).'),
  REGISTRY_PORT: int(18081).describe('The local registry\'s port, for the default of SCHEMA_REGISTRY_URL.'),
  SCHEMA_REGISTRY_URL: optionalStr().describe('Confluent-compatible API of the registry (default http://127.0.0.1:REGISTRY_PORT/apis/ccompat/v7).'),

  // Postgres.
  DATABASE_URL: str('postgres://postgres@127.0.0.1:5432/chat_gateway').describe('The gateway\'s database.'),
  DATABASE_CONNECT_TIMEOUT_MS: int(10_000).describe('Waiting for a connection at most this long.'),
  DATABASE_STATEMENT_TIMEOUT_MS: int(30_000).describe('One statement at most this long.'),

  // The api service.
  API_HOST: str('127.0.0.1').describe('Address the api listens on.'),
  API_PORT: int(18000).describe('Port the api listens on.'),
  PUBLIC_BASE_URL: optionalStr().describe('The api\'s address as customers reach it (default http://API_HOST:API_PORT).'),
  SEND_DEADLINE_MS: int(10_000).describe('How long POST /api/send-message waits for the outcome.'),
  API_BODY_LIMIT_BYTES: int(64 * 1024).describe('Largest request body taken.'),
  PBX_REPLAY_WINDOW_S: int(300).describe('A signed PBX request older than this is refused.'),
  PBX_RECENT_READ_MS: int(0).describe('An API process may use a PBX integration (and a customer\'s PBX module seen on) read this recently without reading it again: the bound on how late a rotated secret, a disabled integration or a module switched off takes effect there. 0 (the default): read on every request, so a change takes effect at once.'),
  IDEMPOTENT_REAPPEND_AFTER_MS: int(5_000).describe('A repeated command whose first append is this old is appended again.'),
  API_REQUEST_TIMEOUT_MS: int(10_000).describe('A request must have arrived whole within this long (a client that trickles its body is cut off with 408).'),
  INSTANCE_EVENT_BODY_LIMIT_BYTES: int(DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES)
    .describe('The largest instance manager webhook body taken: with "webhook base64" on, Evolution posts each media file inside the event; its bytes are dropped before the event is recorded (docs/decisions.md "Instance manager media bodies").'),
  API_TRUSTED_PROXIES: list([]).describe('The ingress\'s addresses or CIDR ranges (comma-separated) whose X-Forwarded-For is believed for the client address (per-address limits). Empty: none, the socket\'s address is the client\'s.'),
  API_METRICS_TOKEN: str('').describe('When set, GET /metrics answers only `Authorization: Bearer <token>` (404 otherwise). Empty: public, except that the API refuses to start without it when NODE_ENV=production.'),
  INSTANCE_EVENT_RATE_PER_SECOND: int(DEFAULT_INSTANCE_EVENT_RATE.perSecond)
    .describe('The instance manager webhook\'s refill rate per instance (at least 1; docs/decisions.md "Instance event ingest: token in a header, rate limit"); past the bucket 429 with Retry-After, which Evolution retries.'),
  INSTANCE_EVENT_BURST: int(DEFAULT_INSTANCE_EVENT_RATE.burst).describe('The bucket of that limit, in events (at least 1).'),
  INSTANCE_EVENT_PATH_TOKENS: oneOf(['accept', 'refuse'], 'accept')
    .describe('`accept` still takes the token in the path (/events/{token}) from instances configured before it moved to a header; `refuse` answers those 401.'),

  // The customer dashboard (docs/dashboard.md).
  DASHBOARD_SESSION_IDLE_MS: int(30 * 60_000).describe('A session unused this long ends.'),
  DASHBOARD_SESSION_ABSOLUTE_MS: int(12 * 3_600_000).describe('A session this old ends, whatever its use.'),
  DASHBOARD_LOCKOUT_AFTER: int(5).describe('This many wrong passwords or codes in a row lock the account (at least 1).'),
  DASHBOARD_LOCKOUT_MS: int(15 * 60_000).describe('For this long.'),
  DASHBOARD_SIGN_IN_PER_MINUTE: int(20).describe('Sign-in and sign-up attempts allowed per client address and minute (at least 1).'),
  DASHBOARD_SIGN_UP_PLAN: str('starter').describe('The plan a customer gets at sign-up, for its period (a key of the policy\'s plans, or none).'),
  DASHBOARD_PAIRING_CLOSE_WAIT_MS: int(10_000)
    .describe('How long a re-pair (or a disconnect) waits for the manager to close the instance after its logout, which Evolution 2.3 does in the background (docs/decisions.md "Instances on the manager: stable names, the close wait").'),
  DASHBOARD_SECURE_COOKIES: optionalFlag().describe('Cookies marked Secure (`true`); default on when PUBLIC_BASE_URL is https.'),
  DASHBOARD_EMAIL_VERIFY_MS: int(24 * 3_600_000).describe('How long a sign-up\'s verification link works (at least a minute).'),
  DASHBOARD_PASSWORD_RESET_MS: int(30 * 60_000).describe('How long a password-reset link works (at least a minute).'),
  NODE_ENV: str('development').describe('`production` caches the dashboard\'s compiled templates and makes the API require API_METRICS_TOKEN.'),

  // Outgoing mail (libs/mail).
  SMTP_URL: str('smtp://127.0.0.1:1025').describe('One nodemailer connection URL (`smtp://host:port`, `smtps://user:pass@host:465`); default the local catcher, maildev.'),
  MAIL_FROM: str('Chat Gateway <no-reply@gateway.localhost>').describe('The sender of every notice.'),

  // The policy service.
  POLICY_HOST: str('127.0.0.1').describe('Address of the policy service\'s ops server.'),
  POLICY_PORT: int(18010).describe('Its port.'),
  POLICY_STATES_PER_PARTITION: int(2_000).describe('Customer states the consumer keeps in memory per partition.'),
  POLICY_LOG_ID_BLOCK: int(256).describe('Log ids taken from the sequence at once.'),
  POLICY_SNAPSHOT_EVERY_EVENTS: int(100).describe('A customer\'s policy state is stored whole at least every this many events folded; between, a batch stores only its events (0 or 1: whole every batch).'),
  POLICY_CHAIN_VERIFY_EVERY_MS: int(60_000).describe('How often the policy service checks the hash chains of the entries appended since its last check (0: never).'),
  POLICY_CHAIN_VERIFY_FULL_EVERY_MS: int(21_600_000).describe('How often that check walks every chain from its first entry instead (the first check always does).'),
  DEAD_LETTERS_COUNT_EVERY_MS: int(60_000).describe('How often the policy service counts the open dead letters for /metrics (0: never).'),

  // The delivery service.
  DELIVERY_HOST: str('127.0.0.1').describe('Address of the delivery service\'s ops server.'),
  DELIVERY_PORT: int(18020).describe('Its port.'),
  DELIVERY_SEND_TIMEOUT_MS: int(5_000).describe('A call to the instance manager waits at most this long.'),
  DELIVERY_BREAKER_RESET_MS: int(10_000).describe('An open breaker tries again after this long.'),
  DELIVERY_CONCURRENCY: int(32).describe('Sends in flight in one process.'),
  DELIVERY_RESOLVE_EVERY_MS: int(1_000).describe('How often sends of open outcome (interrupted or unanswered) are looked for.'),
  DELIVERY_RESOLVE_AFTER_MS: optionalInt().describe('An attempt is resolved once it is this old: past the send timeout and the longest typing delay, no live call is under way (default DELIVERY_SEND_TIMEOUT_MS + DELIVERY_TYPING_MAX_MS + 3000).'),
  ACK_DEADLINE_MS: int(600_000).describe('A send the manager could not be asked about is failed (no_ack) this long after its first claim.'),
  DELIVERY_MAX_ATTEMPTS: int(3).describe('Attempts of a message the manager confirms it does not have, before it is failed for good (at least 1).'),
  DELIVERY_SEND_SETTLE_MS: int(30_000)
    .describe('How long past the send timeout a manager may still be carrying out a send whose caller gave up (Evolution finishes abandoned requests): an absence in its store counts only after it.'),
  DELIVERY_STORE_EVIDENCE_TTL_MS: int(300_000).describe('How long the resolver trusts what it learned about an instance\'s message store (on or off).'),
  // Human pacing of sends (docs/decisions.md "Human pacing at delivery"): jitter is derived from the message id, never random.
  DELIVERY_TYPING_MS_PER_CHAR: int(300).describe('Typing presence shown before a send, per character of its text (300: about 3.3 characters a second), passed to the manager as sendText `delay`.'),
  DELIVERY_TYPING_MIN_MS: int(800).describe('The shortest typing delay of a send that types at all.'),
  DELIVERY_TYPING_MAX_MS: int(12_000).describe('The longest typing delay (0: no typing delay); a send\'s call may take DELIVERY_SEND_TIMEOUT_MS beyond it.'),
  DELIVERY_TYPING_JITTER: ratio(0.2).describe('The typing delay is multiplied by a factor in [1 - jitter, 1 + jitter] derived from the message id (then held within min and max).'),
  DELIVERY_TYPING_SKIP_PURPOSES: list(['authentication']).describe('Message purposes sent without a typing delay (one-time codes must not wait).'),
  DELIVERY_SEND_GAP_MS: int(1_000).describe('Least time between the end of one send on an instance and the start of its next (0: none).'),
  DELIVERY_SEND_GAP_JITTER: ratio(0.5).describe('The gap is lengthened by up to this share of it, derived from the message id.'),

  // The instance-events service. Keyword lists are matched against an inbound message's whole text, case-insensitive.
  INSTANCE_EVENTS_HOST: str('127.0.0.1').describe('Address of the instance-events service\'s ops server.'),
  INSTANCE_EVENTS_PORT: int(18030).describe('Its port.'),
  OPT_OUT_KEYWORDS: list(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'OPT OUT']).describe('Inbound texts that opt the sender out.'),
  OPT_IN_KEYWORDS: list(['START', 'UNSTOP', 'YES']).describe('Inbound texts that opt the sender back in.'),
  INBOUND_LOG_RETENTION_DAYS: int(30).describe('Days the inbound log keeps a received message (the dashboard\'s /inbound-logs).'),
  INBOUND_LOG_PURGE_EVERY_MS: int(3_600_000).describe('How often messages past that are purged.'),

  // Customer webhooks (docs/webhooks.md).
  WEBHOOKS_HOST: str('127.0.0.1').describe('Address of the webhooks service\'s ops server.'),
  WEBHOOKS_PORT: int(18040).describe('Its port.'),
  WEBHOOK_RETRY_DELAYS_MS: intList([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    .describe('Delay before each attempt, counted from the previous one (the first is normally 0).'),
  WEBHOOK_RETRY_JITTER: ratio(0.1).describe('Each delay is multiplied by a factor in [1 - jitter, 1 + jitter].'),
  WEBHOOK_TIMEOUT_MS: int(15_000).describe('A 2xx must arrive within this long.'),
  WEBHOOK_DISABLE_AFTER_MS: int(5 * 24 * 3_600_000).describe('An endpoint whose every attempt failed for this long is disabled.'),
  WEBHOOK_ALLOW_CIDRS: list([]).describe('Ranges opened despite the SSRF block list (empty in production; 127.0.0.0/8 for local runs).'),
  WEBHOOK_ALLOW_HTTP: flag().describe('`true` opens http:// destinations (local runs and the test stack); otherwise https only.'),
  WEBHOOK_HTTPS_ONLY: flag().describe('The older switch: `true` still forces https only, whatever WEBHOOK_ALLOW_HTTP says.'),
  WEBHOOK_SECRET_OVERLAP_MS: int(24 * 3_600_000).describe('After a signing secret is rotated, the old one keeps signing beside the new one this long.'),
  WEBHOOK_CONCURRENCY: int(256).describe('Attempts in flight in one process.'),
  WEBHOOK_ENDPOINT_CONCURRENCY: int(16).describe('Attempts in flight per endpoint.'),
  WEBHOOK_POLL_MS: int(250).describe('How often due deliveries are looked for when nothing woke the worker.'),
  WEBHOOK_LEASE_MS: int(120_000).describe('A claimed delivery whose process died is claimed again after this long.'),

  // OpenTelemetry traces (docs/architecture.md "Traces"), the SDK's standard variables.
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalTrimmed().describe('The full URL spans are posted to over OTLP/HTTP; tracing is on only with an endpoint.'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalTrimmed().describe('Its base, /v1/traces appended (when the traces endpoint is not set).'),
  OTEL_SDK_DISABLED: z.string().optional().transform((raw) => raw?.trim().toLowerCase() === 'true').describe('`true` (any case): tracing off whatever the endpoint.'),
  OTEL_BSP_SCHEDULE_DELAY: int(5_000).describe('Finished spans are exported together this often (OTel\'s default).'),

  // The instance manager (Evolution API v2, or the local simulator).
  SIM_PORT: int(18090).describe('The local simulator\'s port, for the default of MANAGER_URL.'),
  MANAGER_URL: optionalStr().describe('The instance manager\'s base URL (default http://127.0.0.1:SIM_PORT, the local simulator).'),
  MANAGER_GLOBAL_API_KEY: secret(MANAGER_KEY_HINT).describe('The instance manager\'s global API key (default the local simulator\'s `sim-global-key`; set but empty is refused).'),
  SIMULATOR_URL: optionalStr().describe('Deprecated name of MANAGER_URL, read when it is not set (warned at start).'),
  SIM_GLOBAL_API_KEY: secret(MANAGER_KEY_HINT).describe('Deprecated name of MANAGER_GLOBAL_API_KEY, read when it is not set (warned at start).'),

  // gatewayctl.
  GATEWAYCTL_LOG_LEVEL: str('fatal').describe('pino level of gatewayctl\'s own Kafka clients.'),
  GATEWAY_OPERATOR: z.string().optional().describe('Who gatewayctl records as making a change when --by is not given (else USER).'),
  USER: z.string().optional().describe('The login name, the fallback of GATEWAY_OPERATOR (else `operator`).'),
});

export type Settings = z.infer<typeof settingsSchema>;
