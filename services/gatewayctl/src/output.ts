/** Prints a result as JSON (--json) or as aligned key: value lines for a person. */
export function print(result: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (Array.isArray(result)) {
    for (const row of result) print(row, false);
    return;
  }
  if (result && typeof result === 'object') {
    const entries = Object.entries(result as Record<string, unknown>);
    const width = Math.max(...entries.map(([k]) => k.length));
    for (const [key, value] of entries) process.stdout.write(`${key.padEnd(width)}  ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`);
    process.stdout.write('\n');
    return;
  }
  process.stdout.write(`${String(result)}\n`);
}
