import type { ProgressCallback, ProgressEvent } from '@gw/compliance';

/**
 * A one-line progress bar on stderr, redrawn with \r at most every 100 ms; silent when stderr is
 * not a terminal (pipes, CI, the test suite), so machine-readable output stays clean.
 */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): ProgressCallback & { end(): void } {
  const enabled = Boolean(stream.isTTY);
  let last = 0;
  let phase = '';
  let line = '';
  const draw = (event: ProgressEvent, force = false) => {
    if (!enabled) return;
    const now = Date.now();
    if (!force && event.phase === phase && now - last < 100) return;
    if (phase && event.phase !== phase && line) stream.write('\n');
    phase = event.phase;
    last = now;
    const width = 30;
    if (event.total && event.total > 0) {
      const ratio = Math.min(1, event.done / event.total);
      const filled = Math.round(ratio * width);
      line = `${event.phase.padEnd(24)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${event.done}/${event.total} ${(ratio * 100).toFixed(0)}%`;
    } else {
      line = `${event.phase.padEnd(24)} ${event.done}`;
    }
    stream.write(`\r${line}\x1b[K`);
  };
  const callback = ((event: ProgressEvent) => draw(event)) as ProgressCallback & { end(): void };
  callback.end = () => {
    if (enabled && line) stream.write('\n');
    line = '';
    phase = '';
  };
  return callback;
}
