// A service started by a harness that dies without stopping it shuts itself down: an interrupted
// test or bench run leaves no service behind.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./testing/service-child.ts', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
}

/** A harness process that starts the service with its own pid as STOP_WITH_PARENT_PID (or without it) and reports the service's pid. */
function startHarness(watch: boolean): Promise<{ harness: number; service: number }> {
  const script = `
    const { spawn } = require('node:child_process');
    const env = { ...process.env };
    ${watch ? 'env.STOP_WITH_PARENT_PID = String(process.pid);' : 'delete env.STOP_WITH_PARENT_PID;'}
    const child = spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(CHILD)}], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => { if (String(d).includes('up')) process.stdout.write('service ' + child.pid + '\\n'); });
    setInterval(() => undefined, 60_000);
  `;
  const harness = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start')), 30_000);
    harness.stdout!.on('data', (data: Buffer) => {
      const match = /service (\d+)/.exec(String(data));
      if (match) {
        clearTimeout(timer);
        resolve({ harness: harness.pid!, service: Number(match[1]) });
      }
    });
  });
}

describe('a service whose harness dies', () => {
  it('shuts down when it was told the harness pid (STOP_WITH_PARENT_PID)', async () => {
    const { harness, service } = await startHarness(true);
    try {
      expect(alive(service)).toBe(true);
      process.kill(harness, 'SIGKILL');
      expect(await until(() => !alive(service), 10_000)).toBe(true);
    } finally {
      if (alive(service)) process.kill(service, 'SIGKILL');
    }
  });

  it('keeps running without it (only harnesses ask for this)', async () => {
    const { harness, service } = await startHarness(false);
    try {
      process.kill(harness, 'SIGKILL');
      // Longer than the watch's interval: a watching service would have stopped by then.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(alive(service)).toBe(true);
    } finally {
      if (alive(service)) process.kill(service, 'SIGKILL');
    }
  });
});
