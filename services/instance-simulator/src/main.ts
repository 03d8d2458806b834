import { buildSimulator } from './index.ts';
import { globalApiKeyFromEnv } from './options.ts';
import { parseEvolutionVersion } from './evolution-version.ts';

const host = process.env.SIM_HOST ?? '127.0.0.1';
const port = Number.parseInt(process.env.SIM_PORT ?? '18090', 10);
const prefixes = process.env.SIM_UNKNOWN_NUMBER_PREFIXES?.split(',').map((prefix) => prefix.trim());

// Refused before anything starts: an empty key is a deployment mistake, never "use the default".
let globalApiKey: string;
try {
  globalApiKey = globalApiKeyFromEnv(process.env.SIM_GLOBAL_API_KEY);
} catch (error) {
  process.stderr.write(`instance-simulator: ${(error as Error).message}\n`);
  process.exit(1);
}

const app = buildSimulator({
  globalApiKey,
  logger: true,
  logLevel: process.env.SIM_LOG_LEVEL ?? 'info',
  // The phone page may embed the global key, for loopback visitors only.
  pageKeyInline: process.env.SIM_PAGE_KEY_INLINE === '1',
  exposeApiKeyInWebhook: process.env.SIM_WEBHOOK_EXPOSE_APIKEY !== '0',
  // As Evolution reads DATABASE_SAVE_DATA_NEW_MESSAGE: on only when 'true'.
  saveNewMessages: process.env.SIM_DATABASE_SAVE_DATA_NEW_MESSAGE === 'true',
  evolutionVersion: parseEvolutionVersion(process.env.SIM_EVOLUTION_VERSION),
  ...(process.env.SIM_SERVER_URL ? { serverUrl: process.env.SIM_SERVER_URL } : {}),
  ...(prefixes ? { unknownNumberPrefixes: prefixes.filter((prefix) => prefix.length > 0) } : {}),
});

let closing = false;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  try {
    await app.close();
    process.exit(0);
  } catch (error) {
    app.log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.once('SIGTERM', (signal) => void shutdown(signal));
process.once('SIGINT', (signal) => void shutdown(signal));

try {
  await app.listen({ host, port });
} catch (error) {
  app.log.error({ err: error }, 'failed to start');
  process.exit(1);
}
