// One place that reads the environment, so every service agrees on names and defaults.
// Values are read once at start; nothing else in the code base touches process.env. Each setting
// is declared once, in ./settings.ts (name, kind, default, doc); here they are arranged into the
// config object, whose type is inferred from that arrangement.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { firstIssue } from './kinds.ts';
import { settingsSchema, type Settings } from './settings.ts';

export { DEFAULT_INSTANCE_EVENT_BODY_LIMIT_BYTES, DEFAULT_INSTANCE_EVENT_RATE, settingsSchema } from './settings.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

type Env = Record<string, string | undefined>;

export type GatewayConfig = ReturnType<typeof arrange>;

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
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) throw firstIssue(parsed.error);
  return arrange(parsed.data);
}

/**
 * One setting of this process's environment, parsed as declared, for code that runs before or
 * outside a loaded config (the shutdown watch, the dashboard's template cache).
 */
export function processSetting<K extends keyof Settings>(name: K, env: Env = process.env): Settings[K] {
  const parsed = settingsSchema.shape[name].safeParse(env[name], { path: [name] });
  if (!parsed.success) throw firstIssue(parsed.error);
  return parsed.data as Settings[K];
}

/** Old names still read, for one release: each one set is named in `deprecations` (logged at start). */
const RENAMED = [
  ['SIMULATOR_URL', 'MANAGER_URL'],
  ['SIM_GLOBAL_API_KEY', 'MANAGER_GLOBAL_API_KEY'],
] as const;

function arrange(v: Settings) {
  const gatewayEnv = v.GATEWAY_ENV;
  const publicBaseUrl = v.PUBLIC_BASE_URL ?? `http://${v.API_HOST}:${v.API_PORT}`;
  return {
    gatewayEnv,
    /** The keyring that seals secrets at rest (libs/security SecretBox; docs/decisions.md "Secrets at rest"). */
    secretKey: { gatewayEnv, fromEnv: v.GATEWAY_SECRET_KEY, file: v.GATEWAY_SECRET_KEY_FILE, keyId: v.GATEWAY_SECRET_KEY_ID, previous: v.GATEWAY_SECRET_KEYS_PREVIOUS },
    kafkaBrokers: (v.KAFKA_BROKERS ?? `127.0.0.1:${v.KAFKA_PORT}`).split(',').map((b) => b.trim()),
    kafkaClientId: v.KAFKA_CLIENT_ID,
    topicPrefix: v.TOPIC_PREFIX,
    topicPartitions: v.TOPIC_PARTITIONS,
    topicReplication: replication(v),
    consumerSessionTimeoutMs: v.CONSUMER_SESSION_TIMEOUT_MS,
    consumerInstanceId: v.CONSUMER_INSTANCE_ID,
    fetchMaxWaitMs: v.KAFKA_FETCH_MAX_WAIT_MS,
    fetchMinBytes: v.KAFKA_FETCH_MIN_BYTES,
    metadataMaxAgeMs: v.KAFKA_METADATA_MAX_AGE_MS,
    partitionsConcurrently: v.STAGE_PARTITIONS_CONCURRENTLY,
    stageRecordTries: Math.max(1, v.STAGE_RECORD_TRIES),
    lagPollMs: v.LAG_POLL_MS,
    exactlyOnce: v.KAFKA_EXACTLY_ONCE,
    appendQueueLimit: v.APPEND_QUEUE_LIMIT,
    schemaRegistryUrl: v.SCHEMA_REGISTRY_URL ?? `http://127.0.0.1:${v.REGISTRY_PORT}/apis/ccompat/v7`,
    databaseUrl: v.DATABASE_URL,
    database: { connectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT_MS, statementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT_MS },
    logLevel: v.LOG_LEVEL,
    api: {
      host: v.API_HOST,
      port: v.API_PORT,
      publicBaseUrl,
      sendDeadlineMs: v.SEND_DEADLINE_MS,
      bodyLimitBytes: v.API_BODY_LIMIT_BYTES,
      pbxReplayWindowSeconds: v.PBX_REPLAY_WINDOW_S,
      pbxRecentReadMs: v.PBX_RECENT_READ_MS,
      reappendAfterMs: v.IDEMPOTENT_REAPPEND_AFTER_MS,
      requestTimeoutMs: v.API_REQUEST_TIMEOUT_MS,
      instanceEventBodyLimitBytes: v.INSTANCE_EVENT_BODY_LIMIT_BYTES,
      trustedProxies: v.API_TRUSTED_PROXIES,
      metricsToken: v.API_METRICS_TOKEN,
      /** In production (NODE_ENV=production, as the image sets it) the API refuses to start without API_METRICS_TOKEN. */
      metricsTokenRequired: v.NODE_ENV === 'production',
      instanceEventRatePerSecond: Math.max(1, v.INSTANCE_EVENT_RATE_PER_SECOND),
      instanceEventBurst: Math.max(1, v.INSTANCE_EVENT_BURST),
      instanceEventPathTokens: v.INSTANCE_EVENT_PATH_TOKENS,
    },
    dashboard: {
      sessionIdleMs: v.DASHBOARD_SESSION_IDLE_MS,
      sessionAbsoluteMs: v.DASHBOARD_SESSION_ABSOLUTE_MS,
      lockoutAfter: Math.max(1, v.DASHBOARD_LOCKOUT_AFTER),
      lockoutMs: v.DASHBOARD_LOCKOUT_MS,
      signInPerMinute: Math.max(1, v.DASHBOARD_SIGN_IN_PER_MINUTE),
      signUpPlan: v.DASHBOARD_SIGN_UP_PLAN,
      pairingCloseWaitMs: v.DASHBOARD_PAIRING_CLOSE_WAIT_MS,
      secureCookies: v.DASHBOARD_SECURE_COOKIES ?? (v.PUBLIC_BASE_URL ?? '').startsWith('https:'),
      emailVerifyMs: Math.max(60_000, v.DASHBOARD_EMAIL_VERIFY_MS),
      passwordResetMs: Math.max(60_000, v.DASHBOARD_PASSWORD_RESET_MS),
    },
    mail: { smtpUrl: v.SMTP_URL, from: v.MAIL_FROM },
    policy: {
      host: v.POLICY_HOST,
      port: v.POLICY_PORT,
      statesPerPartition: v.POLICY_STATES_PER_PARTITION,
      logIdBlock: v.POLICY_LOG_ID_BLOCK,
      snapshotEveryEvents: v.POLICY_SNAPSHOT_EVERY_EVENTS,
      chainVerifyEveryMs: v.POLICY_CHAIN_VERIFY_EVERY_MS,
      chainVerifyFullEveryMs: v.POLICY_CHAIN_VERIFY_FULL_EVERY_MS,
      deadLettersCountEveryMs: v.DEAD_LETTERS_COUNT_EVERY_MS,
    },
    delivery: {
      host: v.DELIVERY_HOST,
      port: v.DELIVERY_PORT,
      sendTimeoutMs: v.DELIVERY_SEND_TIMEOUT_MS,
      breakerResetMs: v.DELIVERY_BREAKER_RESET_MS,
      concurrency: v.DELIVERY_CONCURRENCY,
      resolveEveryMs: v.DELIVERY_RESOLVE_EVERY_MS,
      resolveAfterMs: v.DELIVERY_RESOLVE_AFTER_MS ?? v.DELIVERY_SEND_TIMEOUT_MS + v.DELIVERY_TYPING_MAX_MS + 3_000,
      ackDeadlineMs: v.ACK_DEADLINE_MS,
      maxAttempts: Math.max(1, v.DELIVERY_MAX_ATTEMPTS),
      sendSettleMs: v.DELIVERY_SEND_SETTLE_MS,
      storeEvidenceTtlMs: v.DELIVERY_STORE_EVIDENCE_TTL_MS,
      /** Human pacing (services/delivery/src/dispatch/pacing.ts). */
      pacing: {
        typingMsPerChar: v.DELIVERY_TYPING_MS_PER_CHAR,
        typingMinMs: Math.min(v.DELIVERY_TYPING_MIN_MS, v.DELIVERY_TYPING_MAX_MS),
        typingMaxMs: v.DELIVERY_TYPING_MAX_MS,
        typingJitter: v.DELIVERY_TYPING_JITTER,
        typingSkipPurposes: v.DELIVERY_TYPING_SKIP_PURPOSES,
        gapMs: v.DELIVERY_SEND_GAP_MS,
        gapJitter: v.DELIVERY_SEND_GAP_JITTER,
      },
    },
    instanceEvents: {
      host: v.INSTANCE_EVENTS_HOST,
      port: v.INSTANCE_EVENTS_PORT,
      optOutKeywords: v.OPT_OUT_KEYWORDS,
      optInKeywords: v.OPT_IN_KEYWORDS,
      inboundRetentionDays: v.INBOUND_LOG_RETENTION_DAYS,
      inboundPurgeEveryMs: v.INBOUND_LOG_PURGE_EVERY_MS,
    },
    webhooks: {
      host: v.WEBHOOKS_HOST,
      port: v.WEBHOOKS_PORT,
      retryDelaysMs: v.WEBHOOK_RETRY_DELAYS_MS,
      retryJitter: v.WEBHOOK_RETRY_JITTER,
      attemptTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
      disableAfterMs: v.WEBHOOK_DISABLE_AFTER_MS,
      allowCidrs: v.WEBHOOK_ALLOW_CIDRS,
      httpsOnly: !v.WEBHOOK_ALLOW_HTTP || v.WEBHOOK_HTTPS_ONLY,
      secretOverlapMs: v.WEBHOOK_SECRET_OVERLAP_MS,
      concurrency: v.WEBHOOK_CONCURRENCY,
      endpointConcurrency: v.WEBHOOK_ENDPOINT_CONCURRENCY,
      pollMs: v.WEBHOOK_POLL_MS,
      leaseMs: v.WEBHOOK_LEASE_MS,
    },
    tracing: tracing(v),
    /** The production instance manager (Evolution API v2), or the local simulator standing in for it. */
    manager: {
      url: v.MANAGER_URL ?? v.SIMULATOR_URL ?? `http://127.0.0.1:${v.SIM_PORT}`,
      globalApiKey: v.MANAGER_GLOBAL_API_KEY ?? v.SIM_GLOBAL_API_KEY ?? 'sim-global-key',
    },
    gatewayctl: {
      logLevel: v.GATEWAYCTL_LOG_LEVEL,
      operator: v.GATEWAY_OPERATOR ?? v.USER ?? 'operator',
    },
    /** Settings read under an old name: one line each, for the service to log at start. */
    deprecations: RENAMED.filter(([old]) => v[old] !== undefined).map(
      ([old, current]) => `${old} is deprecated and will be removed in the next release: set ${current} instead${v[current] !== undefined ? ` (${current} is set and wins)` : ''}`,
    ),
  };
}

/** TOPIC_REPLICATION_FACTOR and TOPIC_MIN_INSYNC_REPLICAS (default: one less than the factor, at least 1). */
function replication(v: Settings): { factor: number; minInsync: number } {
  const factor = Math.max(1, v.TOPIC_REPLICATION_FACTOR);
  const minInsync = Math.max(1, v.TOPIC_MIN_INSYNC_REPLICAS ?? Math.max(1, factor - 1));
  if (minInsync > factor) throw new Error(`TOPIC_MIN_INSYNC_REPLICAS (${minInsync}) cannot exceed TOPIC_REPLICATION_FACTOR (${factor})`);
  return { factor, minInsync };
}

/** The OTLP traces endpoint (null: tracing off, no SDK at all) and the batch delay. */
function tracing(v: Settings): { tracesUrl: string | null; scheduleDelayMs: number } {
  const scheduleDelayMs = v.OTEL_BSP_SCHEDULE_DELAY;
  if (v.OTEL_SDK_DISABLED) return { tracesUrl: null, scheduleDelayMs };
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  if (tracesUrl !== null && !URL.canParse(tracesUrl)) throw new Error(`The OTLP traces endpoint must be a URL, got "${tracesUrl}"`);
  return { tracesUrl, scheduleDelayMs };
}
