import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '@gw/security';
import { SEALED_COLUMNS } from './columns.ts';

// The list rotate walks must name every sealed column: those the migrations create (`*_enc`) and
// those the code reads and writes. A sealed column missing from the list would keep old-key values
// after a rotation, and dropping the old key would lose them.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '');
const listed = SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort();

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    // This folder names them all by design: only the code that seals and opens counts.
    if (entry.isDirectory()) return entry.name === 'node_modules' || path === HERE ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.includes('.test.') ? [path] : [];
  });
}

describe('sealed columns', () => {
  it('lists every *_enc column the migrations create, and only those', () => {
    const found = new Set<string>();
    const migrations = join(ROOT, 'libs/db/migrations');
    for (const file of readdirSync(migrations).filter((f) => f.endsWith('.sql'))) {
      const sql = readFileSync(join(migrations, file), 'utf8').split('-- Down Migration')[0]!;
      for (const [, table, body] of sql.matchAll(/CREATE TABLE (\w+) \(([\s\S]*?)\n\)/g)) {
        for (const [, column] of body!.matchAll(/^\s*(\w+_enc)\s/gm)) found.add(`${table}.${column}`);
      }
      for (const [, table, column] of sql.matchAll(/ALTER TABLE (\w+) ADD COLUMN (?:IF NOT EXISTS )?(\w+_enc)\b/g)) found.add(`${table}.${column}`);
    }
    expect([...found].sort()).toEqual(listed);
  });

  it('lists every *_enc column the services and libraries use', () => {
    const used = new Set<string>();
    for (const file of [...sourceFiles(join(ROOT, 'services')), ...sourceFiles(join(ROOT, 'libs'))]) {
      for (const [column] of readFileSync(file, 'utf8').matchAll(/\b[a-z_]+_enc\b/g)) used.add(column);
    }
    expect([...used].sort()).toEqual(SEALED_COLUMNS.map((c) => c.column).sort());
  });

  it('binds every column to its row: a value sealed for one row or column does not open for another', () => {
    const box = new SecretBox('columns-binding-key-material-0123');
    const uses = new Set<string>();
    for (const spec of SEALED_COLUMNS) {
      const [a, b] = [spec.use('1'), spec.use('2')];
      expect(a, `${spec.table}.${spec.column}`).not.toBe('');
      expect(a).not.toBe(b);
      const open = (sealed: string, use: string) => (spec.formerlyUnbound ? box.openFormerlyUnbound(sealed, use) : box.open(sealed, use));
      expect(open(box.seal('s', a), a)).toBe('s');
      expect(() => open(box.seal('s', a), b), `${spec.table}.${spec.column}`).toThrow(/for this use/);
      uses.add(a);
    }
    // One use per sealed value: the two webhook columns share it (rotation moves the value between them).
    expect(uses.size).toBe(SEALED_COLUMNS.length - 1);
  });
});
