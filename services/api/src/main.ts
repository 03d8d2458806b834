import { createRuntime, onShutdown } from '@gw/runtime';
import { buildApp } from './app.ts';
import { ReplyRouter } from './send-message/reply-router.ts';
import { SecretBox } from '@gw/security';

const runtime = await createRuntime('api');
const { config, logger } = runtime;
const replies = new ReplyRouter(runtime.kafka, runtime.codec, runtime.topics, runtime.pool, logger);
runtime.consumers.push(await replies.start());

const app = await buildApp({
  logger,
  metrics: runtime.metrics,
  readiness: { check: () => runtime.consumers.filter((c) => !c.isReady()).map((c) => `consumer ${c.groupId}`) },
  publicBaseUrl: config.api.publicBaseUrl,
  bodyLimitBytes: config.api.bodyLimitBytes,
  requestTimeoutMs: config.api.requestTimeoutMs,
  idleTimeoutMs: config.api.sendDeadlineMs + 15_000,
  send: { pool: runtime.pool, kafka: runtime.kafka, codec: runtime.codec, replies, deadlineMs: config.api.sendDeadlineMs, reappendAfterMs: config.api.reappendAfterMs },
  pbx: {
    pool: runtime.pool,
    kafka: runtime.kafka,
    codec: runtime.codec,
    replies,
    box: SecretBox.fromConfig(config.secretKey),
    deadlineMs: config.api.sendDeadlineMs,
    replayWindowSeconds: config.api.pbxReplayWindowSeconds,
    reappendAfterMs: config.api.reappendAfterMs,
  },
});
await app.listen({ host: config.api.host, port: config.api.port });
logger.info({ url: config.api.publicBaseUrl }, 'api listening');

onShutdown(logger, async () => {
  // Stop accepting requests, let in-flight ones finish, then release Kafka and Postgres.
  await app.close();
  await runtime.close();
});
