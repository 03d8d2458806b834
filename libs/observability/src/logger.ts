import pino, { type Logger } from 'pino';

// Secrets must never reach a log line: these paths are censored wherever they appear.
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.apikey',
  'req.headers["x-chat-gateway-pbx-secret"]',
  'req.headers["x-chat-gateway-signature"]',
  'headers.authorization',
  'headers.apikey',
  'apiKey',
  'api_key',
  'secret',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.password',
];

export type { Logger };

/** JSON logs to stdout; `toStderr` keeps a CLI's stdout for its own output. */
export function createLogger(service: string, level = 'info', toStderr = false): Logger {
  return pino({
    level,
    base: { service },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }, toStderr ? pino.destination(2) : undefined);
}
