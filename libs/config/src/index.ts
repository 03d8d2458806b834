// One place that reads the environment, so every service agrees on names and defaults.
// Values are read once at start; nothing else in the code base touches process.env.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface GatewayConfig {
  /** GATEWAY_ENV: `production` (the default) refuses to seal or open secrets without GATEWAY_SECRET_KEY; `local` reads the key file. */
  gatewayEnv: 'local' | 'production';
  /**
   * The keyring that seals secrets at rest (libs/security SecretBox; docs/decisions.md "Secrets at rest"):
   * GATEWAY_SECRET_KEY (else, only when local, GATEWAY_SECRET_KEY_FILE), its id GATEWAY_SECRET_KEY_ID
   * (else derived from the key), and GATEWAY_SECRET_KEYS_PREVIOUS (`[<kid>:]<key>`, comma-separated) to open older values.
   */
  secretKey: { gatewayEnv: 'local' | 'production'; fromEnv: string | undefined; file: string; keyId: string | undefined; previous: string[] };
  kafkaBrokers: string[];
  kafkaClientId: string;
  /** Prefix for every topic and consumer group, so test runs never see each other's state. */
  topicPrefix: string;
  topicPartitions: number;
  /**
   * Replicas of every topic the gateway creates, and how many must have a record before it is
   * acknowledged (producers use acks=all). 1 and 1 on the single local broker; 3 and 2 on a cluster.
   */
  topicReplication: { factor: number; minInsync: number };
  /** How long the group waits for a silent member before giving its partitions to another. */
  consumerSessionTimeoutMs: number;
  /** This process's slot in its consumer group; distinct per running instance, kept across restarts. */
  consumerInstanceId: string;
  /** Upper bound of a consumer fetch's wait; bounds the latency of each transactional hop. */
  fetchMaxWaitMs: number;
  fetchMinBytes: number;
  /** Cluster metadata (partition leaders) older than this is asked for again (libs/kafka client.ts says why it is short). */
  metadataMaxAgeMs: number;
  partitionsConcurrently: number;
  /** Tries of one record on its own, after its batch failed, before the stage dead-letters it. */
  stageRecordTries: number;
  /** How often consumer lag is measured for /metrics. */
  lagPollMs: number;
  /** How consume-transform-produce stages commit: Kafka transactions, or idempotent appends then offsets. */
  exactlyOnce: 'transactions' | 'idempotent';
  /** Records waiting to be appended in one process at most; past it requests are refused at once (overloaded). */
  appendQueueLimit: number;
  schemaRegistryUrl: string;
  databaseUrl: string;
  /** Postgres: waiting for a connection, and one statement, at most this long. */
  database: { connectTimeoutMs: number; statementTimeoutMs: number };
  logLevel: string;
  api: {
    host: string;
    port: number;
    publicBaseUrl: string;
    sendDeadlineMs: number;
    bodyLimitBytes: number;
    pbxReplayWindowSeconds: number;
    reappendAfterMs: number;
    /** A request must have arrived whole within this long (a client that trickles its body is cut off with 408). */
    requestTimeoutMs: number;
    /**
     * The largest instance manager webhook body taken (INSTANCE_EVENT_BODY_LIMIT_BYTES): with
     * "webhook base64" on, Evolution posts each media file inside the event; its bytes are dropped
     * before the event is recorded (docs/decisions.md "Instance manager media bodies").
     */
    instanceEventBodyLimitBytes: number;
    /**
     * API_TRUSTED_PROXIES: the ingress's addresses or CIDR ranges (comma-separated) whose
     * X-Forwarded-For is believed for the client address (per-address limits). Empty (the
     * default): none, the socket's address is the client's.
     */
    trustedProxies: string[];
    /** API_METRICS_TOKEN: when set, GET /metrics answers only `Authorization: Bearer <token>` (404 otherwise). Empty: public, as before. */
    metricsToken: string;
    /**
     * The instance manager webhook's limit per instance (docs/decisions.md "Instance event ingest:
     * token in a header, rate limit"): a bucket of INSTANCE_EVENT_BURST events refilled at
     * INSTANCE_EVENT_RATE_PER_SECOND; past it 429 with Retry-After, which Evolution retries.
     */
    instanceEventRatePerSecond: number;
    instanceEventBurst: number;
    /**
     * INSTANCE_EVENT_PATH_TOKENS: `accept` (default) still takes the token in the path
     * (/events/{token}) from instances configured before it moved to a header; `refuse` answers those 401.
     */
    instanceEventPathTokens: 'accept' | 'refuse';
  };
  /** The customer dashboard's accounts and sessions (docs/dashboard.md). */
  dashboard: {
    /** A session unused this long ends; one older than `sessionAbsoluteMs` ends whatever its use. */
    sessionIdleMs: number;
    sessionAbsoluteMs: number;
    /** This many wrong passwords or codes in a row lock the account for `lockoutMs`. */
    lockoutAfter: number;
    lockoutMs: number;
    /** Sign-in and sign-up attempts allowed per client address and minute. */
    signInPerMinute: number;
    /** Cookies marked Secure: on when the public base URL is https. */
    secureCookies: boolean;
    /** The plan a customer gets at sign-up, for its period (a key of the policy's plans, or none). */
    signUpPlan: string;
    /**
     * DASHBOARD_PAIRING_CLOSE_WAIT_MS: how long a re-pair (or a disconnect) waits for the manager
     * to close the instance after its logout, which Evolution 2.3 does in the background
     * (docs/decisions.md "Instances on the manager: stable names, the close wait").
     */
    pairingCloseWaitMs: number;
    /** DASHBOARD_EMAIL_VERIFY_MS: how long a sign-up's verification link works (default 24 h). */
    emailVerifyMs: number;
    /** DASHBOARD_PASSWORD_RESET_MS: how long a password-reset link works (default 30 min). */
    passwordResetMs: number;
  };
  /**
   * Outgoing mail (libs/mail): SMTP_URL, one nodemailer connection URL (`smtp://host:port`,
   * `smtps://user:pass@host:465`; default the local catcher, maildev, on 127.0.0.1:1025), and
   * MAIL_FROM, the sender of every notice.
   */
  mail: { smtpUrl: string; from: string };
  policy: {
    host: string;
    port: number;
    statesPerPartition: number;
    logIdBlock: number;
    /** How often the policy service checks the hash chains of the entries appended since its last check (0: never). */
    chainVerifyEveryMs: number;
    /** How often that check walks every chain from its first entry instead (the first check always does). */
    chainVerifyFullEveryMs: number;
    /** How often the policy service counts the open dead letters for /metrics (0: never). */
    deadLettersCountEveryMs: number;
  };
  delivery: {
    host: string;
    port: number;
    sendTimeoutMs: number;
    breakerResetMs: number;
    concurrency: number;
    /** How often sends of open outcome (interrupted or unanswered) are looked for. */
    resolveEveryMs: number;
    /** An attempt is resolved once it is this old: past the send timeout, no live call is under way. */
    resolveAfterMs: number;
    /** A send the manager could not be asked about is failed (no_ack) this long after its first claim. */
    ackDeadlineMs: number;
    /** Attempts of a message the manager confirms it does not have, before it is failed for good. */
    maxAttempts: number;
    /**
     * How long past the send timeout a manager may still be carrying out a send whose caller gave
     * up (Evolution finishes abandoned requests): an absence in its store counts only after it.
     */
    sendSettleMs: number;
    /** How long the resolver trusts what it learned about an instance's message store (on or off). */
    storeEvidenceTtlMs: number;
  };
  /** Keyword lists are matched against an inbound message's whole text, case-insensitive. */
  instanceEvents: {
    host: string;
    port: number;
    optOutKeywords: string[];
    optInKeywords: string[];
    /** Days the inbound log keeps a received message (the dashboard's /inbound-logs). */
    inboundRetentionDays: number;
    /** How often messages past that are purged. */
    inboundPurgeEveryMs: number;
  };
  simulator: { url: string; globalApiKey: string };
  /**
   * OpenTelemetry traces (docs/architecture.md "Traces"), posted over OTLP/HTTP. On only when an
   * endpoint is set: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else
   * OTEL_EXPORTER_OTLP_ENDPOINT (its base, /v1/traces appended), unless OTEL_SDK_DISABLED=true.
   */
  tracing: {
    /** null: tracing off (no SDK at all). */
    tracesUrl: string | null;
    /** OTEL_BSP_SCHEDULE_DELAY: finished spans are exported together this often (OTel's default, 5000 ms). */
    scheduleDelayMs: number;
  };
  /** Customer webhooks (docs/webhooks.md): retry schedule, destination rules and concurrency. */
  webhooks: {
    host: string;
    port: number;
    /** Delay before each attempt, counted from the previous one (the first is normally 0). */
    retryDelaysMs: number[];
    /** Each delay is multiplied by a factor in [1 - jitter, 1 + jitter]. */
    retryJitter: number;
    /** A 2xx must arrive within this long. */
    attemptTimeoutMs: number;
    /** An endpoint whose every attempt failed for this long is disabled. */
    disableAfterMs: number;
    /** Ranges opened despite the SSRF block list (empty in production; 127.0.0.0/8 for local runs). */
    allowCidrs: string[];
    /**
     * Refuse http:// destinations: true unless WEBHOOK_ALLOW_HTTP=true opens them (local runs and
     * the test stack do); WEBHOOK_HTTPS_ONLY=true, the older switch, still forces it.
     */
    httpsOnly: boolean;
    /** After a signing secret is rotated, the old one keeps signing beside the new one this long. */
    secretOverlapMs: number;
    /** Attempts in flight in one process, and per endpoint. */
    concurrency: number;
    endpointConcurrency: number;
    /** How often due deliveries are looked for when nothing woke the worker. */
    pollMs: number;
    /** A claimed delivery whose process died is claimed again after this long. */
    leaseMs: number;
  };
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

/** TOPIC_REPLICATION_FACTOR (default 1) and TOPIC_MIN_INSYNC_REPLICAS (default: one less than the factor, at least 1). */
function replication(env: Env): { factor: number; minInsync: number } {
  const factor = Math.max(1, int(env, 'TOPIC_REPLICATION_FACTOR', 1));
  const minInsync = Math.max(1, int(env, 'TOPIC_MIN_INSYNC_REPLICAS', Math.max(1, factor - 1)));
  if (minInsync > factor) throw new Error(`TOPIC_MIN_INSYNC_REPLICAS (${minInsync}) cannot exceed TOPIC_REPLICATION_FACTOR (${factor})`);
  return { factor, minInsync };
}

/** The OTLP traces endpoint and batch delay, by the OpenTelemetry SDK's standard variables. */
function tracing(env: Env): GatewayConfig['tracing'] {
  const scheduleDelayMs = int(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000);
  if (str(env, 'OTEL_SDK_DISABLED', 'false').trim().toLowerCase() === 'true') return { tracesUrl: null, scheduleDelayMs };
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = traces ? traces : base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
  if (tracesUrl !== null && !URL.canParse(tracesUrl)) throw new Error(`The OTLP traces endpoint must be a URL, got "${tracesUrl}"`);
  return { tracesUrl, scheduleDelayMs };
}

function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value >= 1) throw new Error(`Environment variable ${name} must be a number in [0, 1), got "${raw}"`);
  return value;
}

function intList(env: Env, name: string, fallback: number[]): number[] {
  const values = list(env, name, fallback.map(String)).map(Number);
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 0)) {
    throw new Error(`Environment variable ${name} must be a comma-separated list of non-negative whole numbers, got "${env[name]}"`);
  }
  return values;
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** Where deploy/local/services.sh writes the settings of a local stack. */
/** 32 MiB: a WhatsApp photo or voice note in base64 with room to spare (larger media is refused with 413, and retried by the manager). */
export const DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * Per instance: 2,000 events at once (a reconnect's backlog of offline messages, a group's
 * history), then 50 a second: a send makes about five (send.message, three acks, chats.upsert).
 */
export const DEFAULT_INSTANCE_EVENT_RATE = { perSecond: 50, burst: 2_000 };

function pathTokens(env: Env): 'accept' | 'refuse' {
  const value = str(env, 'INSTANCE_EVENT_PATH_TOKENS', 'accept');
  if (value !== 'accept' && value !== 'refuse') throw new Error(`Environment variable INSTANCE_EVENT_PATH_TOKENS must be accept or refuse, got "${value}"`);
  return value;
}

/**
 * The instance manager's global key: unset gives the local simulator's well-known key; set but
 * empty (an unfilled deployment secret) is refused rather than silently becoming that default.
 */
function simulatorKey(env: Env): string {
  const value = env.SIM_GLOBAL_API_KEY;
  if (value === undefined) return 'sim-global-key';
  if (value.trim() === '') {
    throw new Error('SIM_GLOBAL_API_KEY is set but empty: give it the instance manager\'s global API key, or unset it for a local run with the simulator\'s default key.');
  }
  return value;
}

export const LOCAL_SETTINGS_FILE = `${REPO_ROOT}.run/local.env`;

/**
 * The environment with the local stack's settings (KEY=value lines of .run/local.env, written by
 * `make run`) underneath it, when GATEWAY_ENV is not set and the file exists: gatewayctl run by
 * hand on a local stack then uses the key file, destinations and ports the services use. A
 * deployment sets GATEWAY_ENV and never reads the file.
 */
export function withLocalSettings(env: Env = process.env, file = LOCAL_SETTINGS_FILE): Env {
  if (env.GATEWAY_ENV !== undefined || !existsSync(file)) return env;
  const settings: Env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) settings[match[1]!] = match[2];
  }
  return { ...settings, ...env };
}

export function loadConfig(env: Env = process.env): GatewayConfig {
  const apiHost = str(env, 'API_HOST', '127.0.0.1');
  const apiPort = int(env, 'API_PORT', 18000);
  const kafkaPort = int(env, 'KAFKA_PORT', 19092);
  const registryPort = int(env, 'REGISTRY_PORT', 18081);
  const sendTimeoutMs = int(env, 'DELIVERY_SEND_TIMEOUT_MS', 5_000);
  const gatewayEnv = str(env, 'GATEWAY_ENV', 'production');
  if (gatewayEnv !== 'local' && gatewayEnv !== 'production') throw new Error(`Environment variable GATEWAY_ENV must be local or production, got "${gatewayEnv}"`);
  return {
    gatewayEnv,
    secretKey: {
      gatewayEnv,
      fromEnv: env.GATEWAY_SECRET_KEY || undefined,
      file: str(env, 'GATEWAY_SECRET_KEY_FILE', `${REPO_ROOT}.run/secret.key`),
      keyId: env.GATEWAY_SECRET_KEY_ID || undefined,
      previous: list(env, 'GATEWAY_SECRET_KEYS_PREVIOUS', []),
    },
    kafkaBrokers: str(env, 'KAFKA_BROKERS', `127.0.0.1:${kafkaPort}`).split(',').map((b) => b.trim()),
    kafkaClientId: str(env, 'KAFKA_CLIENT_ID', 'chat-gateway'),
    topicPrefix: str(env, 'TOPIC_PREFIX', 'gw.'),
    topicPartitions: int(env, 'TOPIC_PARTITIONS', 6),
    topicReplication: replication(env),
    consumerSessionTimeoutMs: int(env, 'CONSUMER_SESSION_TIMEOUT_MS', 10_000),
    consumerInstanceId: str(env, 'CONSUMER_INSTANCE_ID', '0'),
    fetchMaxWaitMs: int(env, 'KAFKA_FETCH_MAX_WAIT_MS', 50),
    fetchMinBytes: int(env, 'KAFKA_FETCH_MIN_BYTES', 1),
    metadataMaxAgeMs: int(env, 'KAFKA_METADATA_MAX_AGE_MS', 5_000),
    partitionsConcurrently: int(env, 'STAGE_PARTITIONS_CONCURRENTLY', 3),
    stageRecordTries: Math.max(1, int(env, 'STAGE_RECORD_TRIES', 3)),
    lagPollMs: int(env, 'LAG_POLL_MS', 5_000),
    exactlyOnce: str(env, 'KAFKA_EXACTLY_ONCE', 'idempotent') === 'transactions' ? 'transactions' : 'idempotent',
    appendQueueLimit: int(env, 'APPEND_QUEUE_LIMIT', 10_000),
    database: {
      connectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 10_000),
      statementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000),
    },
    schemaRegistryUrl: str(env, 'SCHEMA_REGISTRY_URL', `http://127.0.0.1:${registryPort}/apis/ccompat/v7`),
    databaseUrl: str(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/chat_gateway'),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    api: {
      host: apiHost,
      port: apiPort,
      publicBaseUrl: str(env, 'PUBLIC_BASE_URL', `http://${apiHost}:${apiPort}`),
      sendDeadlineMs: int(env, 'SEND_DEADLINE_MS', 10_000),
      bodyLimitBytes: int(env, 'API_BODY_LIMIT_BYTES', 64 * 1024),
      pbxReplayWindowSeconds: int(env, 'PBX_REPLAY_WINDOW_S', 300),
      reappendAfterMs: int(env, 'IDEMPOTENT_REAPPEND_AFTER_MS', 5_000),
      requestTimeoutMs: int(env, 'API_REQUEST_TIMEOUT_MS', 10_000),
      instanceEventBodyLimitBytes: int(env, 'INSTANCE_EVENT_BODY_LIMIT_BYTES', DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES),
      trustedProxies: list(env, 'API_TRUSTED_PROXIES', []),
      metricsToken: str(env, 'API_METRICS_TOKEN', ''),
      instanceEventRatePerSecond: Math.max(1, int(env, 'INSTANCE_EVENT_RATE_PER_SECOND', DEFAULT_INSTANCE_EVENT_RATE.perSecond)),
      instanceEventBurst: Math.max(1, int(env, 'INSTANCE_EVENT_BURST', DEFAULT_INSTANCE_EVENT_RATE.burst)),
      instanceEventPathTokens: pathTokens(env),
    },
    dashboard: {
      sessionIdleMs: int(env, 'DASHBOARD_SESSION_IDLE_MS', 30 * 60_000),
      sessionAbsoluteMs: int(env, 'DASHBOARD_SESSION_ABSOLUTE_MS', 12 * 3_600_000),
      lockoutAfter: Math.max(1, int(env, 'DASHBOARD_LOCKOUT_AFTER', 5)),
      lockoutMs: int(env, 'DASHBOARD_LOCKOUT_MS', 15 * 60_000),
      signInPerMinute: Math.max(1, int(env, 'DASHBOARD_SIGN_IN_PER_MINUTE', 20)),
      signUpPlan: str(env, 'DASHBOARD_SIGN_UP_PLAN', 'starter'),
      pairingCloseWaitMs: int(env, 'DASHBOARD_PAIRING_CLOSE_WAIT_MS', 10_000),
      secureCookies: str(env, 'DASHBOARD_SECURE_COOKIES', str(env, 'PUBLIC_BASE_URL', '').startsWith('https:') ? 'true' : 'false') === 'true',
      emailVerifyMs: Math.max(60_000, int(env, 'DASHBOARD_EMAIL_VERIFY_MS', 24 * 3_600_000)),
      passwordResetMs: Math.max(60_000, int(env, 'DASHBOARD_PASSWORD_RESET_MS', 30 * 60_000)),
    },
    mail: {
      smtpUrl: str(env, 'SMTP_URL', 'smtp://127.0.0.1:1025'),
      from: str(env, 'MAIL_FROM', 'Chat Gateway <no-reply@gateway.localhost>'),
    },
    policy: {
      host: str(env, 'POLICY_HOST', '127.0.0.1'),
      port: int(env, 'POLICY_PORT', 18010),
      statesPerPartition: int(env, 'POLICY_STATES_PER_PARTITION', 2_000),
      logIdBlock: int(env, 'POLICY_LOG_ID_BLOCK', 256),
      chainVerifyEveryMs: int(env, 'POLICY_CHAIN_VERIFY_EVERY_MS', 60_000),
      chainVerifyFullEveryMs: int(env, 'POLICY_CHAIN_VERIFY_FULL_EVERY_MS', 21_600_000),
      deadLettersCountEveryMs: int(env, 'DEAD_LETTERS_COUNT_EVERY_MS', 60_000),
    },
    delivery: {
      host: str(env, 'DELIVERY_HOST', '127.0.0.1'),
      port: int(env, 'DELIVERY_PORT', 18020),
      sendTimeoutMs,
      breakerResetMs: int(env, 'DELIVERY_BREAKER_RESET_MS', 10_000),
      concurrency: int(env, 'DELIVERY_CONCURRENCY', 32),
      resolveEveryMs: int(env, 'DELIVERY_RESOLVE_EVERY_MS', 1_000),
      resolveAfterMs: int(env, 'DELIVERY_RESOLVE_AFTER_MS', sendTimeoutMs + 3_000),
      ackDeadlineMs: int(env, 'ACK_DEADLINE_MS', 600_000),
      maxAttempts: Math.max(1, int(env, 'DELIVERY_MAX_ATTEMPTS', 3)),
      sendSettleMs: int(env, 'DELIVERY_SEND_SETTLE_MS', 30_000),
      storeEvidenceTtlMs: int(env, 'DELIVERY_STORE_EVIDENCE_TTL_MS', 300_000),
    },
    instanceEvents: {
      host: str(env, 'INSTANCE_EVENTS_HOST', '127.0.0.1'),
      port: int(env, 'INSTANCE_EVENTS_PORT', 18030),
      optOutKeywords: list(env, 'OPT_OUT_KEYWORDS', ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'OPT OUT']),
      optInKeywords: list(env, 'OPT_IN_KEYWORDS', ['START', 'UNSTOP', 'YES']),
      inboundRetentionDays: int(env, 'INBOUND_LOG_RETENTION_DAYS', 30),
      inboundPurgeEveryMs: int(env, 'INBOUND_LOG_PURGE_EVERY_MS', 3_600_000),
    },
    webhooks: {
      host: str(env, 'WEBHOOKS_HOST', '127.0.0.1'),
      port: int(env, 'WEBHOOKS_PORT', 18040),
      retryDelaysMs: intList(env, 'WEBHOOK_RETRY_DELAYS_MS', [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
      retryJitter: ratio(env, 'WEBHOOK_RETRY_JITTER', 0.1),
      attemptTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 15_000),
      disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_MS', 5 * 24 * 3_600_000),
      allowCidrs: list(env, 'WEBHOOK_ALLOW_CIDRS', []),
      httpsOnly: str(env, 'WEBHOOK_ALLOW_HTTP', 'false') !== 'true' || str(env, 'WEBHOOK_HTTPS_ONLY', 'false') === 'true',
      secretOverlapMs: int(env, 'WEBHOOK_SECRET_OVERLAP_MS', 24 * 3_600_000),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 256),
      endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 16),
      pollMs: int(env, 'WEBHOOK_POLL_MS', 250),
      leaseMs: int(env, 'WEBHOOK_LEASE_MS', 120_000),
    },
    tracing: tracing(env),
    simulator: {
      url: str(env, 'SIMULATOR_URL', `http://127.0.0.1:${int(env, 'SIM_PORT', 18090)}`),
      globalApiKey: simulatorKey(env),
    },
  };
}
