import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GLOBAL_API_KEY, globalApiKeyFromEnv } from './options.ts';

// The simulator's start with SIM_GLOBAL_API_KEY set but empty: refused with a message, before it
// listens (a start that went on would listen on port 0 until killed, and fail this test).
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = execFile(TSX, [MAIN], { env: { ...process.env, SIM_HOST: '127.0.0.1', SIM_PORT: '0', SIM_LOG_LEVEL: 'error', ...env }, timeout: 15_000 }, (error, _stdout, stderr) => {
      resolve({ code: child.exitCode, stderr, killed: error?.killed ?? false });
    });
  });
}

describe('SIM_GLOBAL_API_KEY', () => {
  it('set but empty (or blank): the simulator refuses to start, naming the variable', async () => {
    for (const value of ['', '   ']) {
      const started = await start({ SIM_GLOBAL_API_KEY: value });
      expect(started.killed).toBe(false);
      expect(started.code).toBe(1);
      expect(started.stderr).toContain('SIM_GLOBAL_API_KEY is set but empty');
    }
  });

  it('unset: the documented local default; set: that key', () => {
    expect(globalApiKeyFromEnv(undefined)).toBe(DEFAULT_GLOBAL_API_KEY);
    expect(globalApiKeyFromEnv('a-real-key')).toBe('a-real-key');
    expect(() => globalApiKeyFromEnv('')).toThrow(/SIM_GLOBAL_API_KEY is set but empty/);
  });
});
