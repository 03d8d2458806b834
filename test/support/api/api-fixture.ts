// For the API's route tests: the app in-process (app.inject) over a real runtime (Kafka, the
// registry and Postgres of an isolated test database), with a fake reply router in place of the
// Kafka-consuming one; accounts made by gatewayctl's own commands; and a follower of the topics
// the routes append to, read as any consumer reads them.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { GatewayConfig } from '@gw/config';
import type { AnyEvent } from '@gw/events';
import { KafkaInspector, type RunningConsumer } from '@gw/kafka';
import { createMetrics, type Logger } from '@gw/observability';
import { createRuntime, type Runtime } from '@gw/runtime';
import { SecretBox } from '@gw/security';
import { buildApp, type AppDeps } from '../../../services/api/src/app.ts';
import { dashboardAppends, dashboardWebhookDeps, messagingRules } from '@gw/dashboard';
import { useInbox, useStepLedger } from '../dashboard/page-client.ts';
import { createMailer, type Mailer } from '@gw/mail';
import { startMailCatcher, type MailCatcher } from '../mail-catcher.ts';
import type { GuardedRoute } from '@gw/dashboard';
import type { PbxDeps } from '../../../services/api/src/pbx/route.ts';
import type { SendMessageDeps } from '../../../services/api/src/send-message/route.ts';
import { FakeReplies } from './fake-replies.ts';
// Other services and the shared test support are reached by path, as the other services' int tests do.
import { isolate, type Isolation } from '../infra.ts';
import { createDemo } from '../../../services/gatewayctl/src/accounts/demo.ts';
import { FactLog } from '../../../services/gatewayctl/src/policy/fact-log.ts';
import { startSimulator, type Harness } from '../../../services/instance-simulator/src/testing/sim-harness.ts';

export type TestAccount = Awaited<ReturnType<typeof createDemo>>;

export interface AppSettings {
  deadlineMs: number;
  reappendAfterMs: number;
  replayWindowSeconds: number;
  /** How long a PBX integration read is used again (default: the configuration's, 0). */
  pbxRecentReadMs: number;
  bodyLimitBytes: number;
  notReady: string[];
  /** The dashboard's session and lockout settings (default: the configuration's). */
  dashboard: Partial<GatewayConfig['dashboard']>;
  /** Filled with every dashboard route and its permission as the app registers them. */
  dashboardRoutes: GuardedRoute[];
  /** The app's logger (default: none), e.g. to check what the app logs. */
  logger: Logger;
  /** Proxies whose X-Forwarded-For is believed (default: none, as in production's default). */
  trustedProxies: string[];
  /** The instance manager webhook's rate limit and token forms (default: the route's). */
  instanceEvents: NonNullable<AppDeps['instanceEvents']>;
  /** How the dashboard sends mail (default: to the fixture's mail catcher). */
  mailer: Mailer;
}

export interface FollowedRecord {
  topic: string;
  key: string | null;
  headers: Record<string, string>;
  event: AnyEvent;
}

export interface ApiFixture {
  isolation: Isolation;
  runtime: Runtime;
  box: SecretBox;
  replies: FakeReplies;
  /** The instance manager (a simulator) that accounts and the dashboard's instances are created on. */
  simulator: Harness;
  /** The local mail catcher (maildev) the dashboard's mail goes to; tests read it over its REST API. */
  mail: MailCatcher;
  /** The dashboard's mailer (to `mail`). */
  mailer: Mailer;
  /** The app every test of the file uses (settings as in production, the fake reply router). */
  app: FastifyInstance;
  /** Another app over the same runtime, with other settings (close it after use). */
  build(settings?: Partial<AppSettings>): Promise<FastifyInstance>;
  /** A fresh customer as `gatewayctl demo` makes it: paired instance, API key, PBX integration. */
  account(options?: { pbxHmac?: boolean }): Promise<TestAccount>;
  /** Every record appended to the customer-events, instance-events and account-events topics so far. */
  records: FollowedRecord[];
  /** Waits until the followed records hold one matching, and returns it. */
  record(match: (record: FollowedRecord) => boolean, what: string, timeoutMs?: number): Promise<FollowedRecord>;
  close(): Promise<void>;
}

// Nowhere: the simulator's webhook deliveries (pairing events) to it fail and are given up; the
// instance-events route is tested by injecting requests, not by the simulator's posts.
const UNREACHABLE_BASE_URL = 'http://127.0.0.1:9';

export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function follow(runtime: Runtime, records: FollowedRecord[]): Promise<RunningConsumer> {
  const consumer = await runtime.kafka.listen({
    groupId: runtime.topics.group(`api-test-follower-${randomUUID()}`),
    topics: [runtime.topics.name('customerEvents'), runtime.topics.name('instanceEvents'), runtime.topics.name('accountEvents')],
    fromBeginning: true,
    onRecord: async (record) => {
      const event = await runtime.codec.decode(record);
      if (event) records.push({ topic: record.topic, key: record.key, headers: record.headers, event });
    },
  });
  await consumer.ready;
  return consumer;
}

export async function apiFixture(): Promise<ApiFixture> {
  const isolation = await isolate();
  const runtime = await createRuntime('api-test', { env: { ...process.env, ...isolation.env }, defaultMetrics: false });
  const simulator: Harness = await startSimulator({ logger: false });
  const facts = new FactLog(runtime.config);
  const box = new SecretBox(isolation.env.GATEWAY_SECRET_KEY!);
  const replies = new FakeReplies();
  const records: FollowedRecord[] = [];
  const follower = await follow(runtime, records);
  const mail = await startMailCatcher();
  const mailer = createMailer({ smtpUrl: mail.smtpUrl, from: runtime.config.mail.from });
  useInbox(mail);
  const api = runtime.config.api;
  // Dashboard tests reuse a user's current TOTP code; see totpNow.
  useStepLedger(runtime.pool);

  const build = async (settings: Partial<AppSettings> = {}) => {
    const common = {
      pool: runtime.pool,
      kafka: runtime.kafka,
      codec: runtime.codec,
      replies,
      deadlineMs: settings.deadlineMs ?? api.sendDeadlineMs,
      reappendAfterMs: settings.reappendAfterMs ?? api.reappendAfterMs,
    };
    const send: SendMessageDeps = common;
    const pbx: PbxDeps = { ...common, box, replayWindowSeconds: settings.replayWindowSeconds ?? api.pbxReplayWindowSeconds, recentReadMs: settings.pbxRecentReadMs ?? api.pbxRecentReadMs };
    const app = await buildApp({
      logger: settings.logger ?? false,
      metrics: createMetrics('api-test', false),
      readiness: { check: () => settings.notReady ?? [] },
      publicBaseUrl: 'https://gateway.test',
      bodyLimitBytes: settings.bodyLimitBytes ?? api.bodyLimitBytes,
      requestTimeoutMs: api.requestTimeoutMs,
      ...(settings.trustedProxies ? { trustedProxies: settings.trustedProxies } : {}),
      ...(settings.instanceEvents ? { instanceEvents: settings.instanceEvents } : {}),
      idleTimeoutMs: api.sendDeadlineMs + 15_000,
      send,
      pbx,
      dashboard: {
        pool: runtime.pool,
        box,
        // Every helper-made owner now signs up, verifies and signs in (three limited forms): the
        // per-address limit is raised here; the tests of the limit set their own.
        settings: { ...runtime.config.dashboard, signInPerMinute: 1_000, ...settings.dashboard },
        mailer: settings.mailer ?? mailer,
        appends: dashboardAppends(runtime.kafka, runtime.codec),
        instanceManager: { url: simulator.baseUrl, apiKey: simulator.globalKey },
        webhooks: dashboardWebhookDeps(runtime.config),
        messaging: messagingRules(runtime.config),
        inboundRetentionDays: runtime.config.instanceEvents.inboundRetentionDays,
        // The runtime's pool (production gives these a small pool of their own, main.ts).
        compliance: { pool: runtime.pool, kafka: new KafkaInspector(runtime.config.kafkaBrokers, runtime.config.topicPrefix), codec: runtime.codec, topics: runtime.topics },
        ...(settings.dashboardRoutes ? { routes: settings.dashboardRoutes } : {}),
      },
    });
    await app.ready();
    return app;
  };
  const app = await build();

  return {
    isolation,
    runtime,
    box,
    replies,
    simulator,
    mail,
    mailer,
    app,
    build,
    records,
    account: (options = {}) =>
      createDemo(runtime.pool, box, facts, {
        baseUrl: UNREACHABLE_BASE_URL,
        simulatorUrl: simulator.baseUrl,
        simulatorKey: simulator.globalKey,
        plan: 'scale',
        pbxHmac: options.pbxHmac ?? false,
      }),
    async record(match, what, timeoutMs = 15_000) {
      let found: FollowedRecord | undefined;
      await until(() => Boolean((found = records.find(match))), timeoutMs, what);
      return found!;
    },
    async close() {
      await app.close();
      await mailer.close();
      await mail.stop();
      useInbox(null);
      await follower.stop();
      await facts.close();
      await runtime.close();
      await simulator.close();
      await isolation.cleanup();
    },
  };
}

/** A fixture for a test file, set up before its tests and torn down after them. */
export function useApiFixture(): { readonly fixture: ApiFixture } {
  let fixture: ApiFixture | undefined;
  beforeAll(async () => {
    fixture = await apiFixture();
  }, 120_000);
  afterAll(async () => {
    await fixture?.close();
  });
  return {
    get fixture() {
      if (!fixture) throw new Error('the API fixture is not set up yet');
      return fixture;
    },
  };
}
