import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { can, PERMISSIONS, ROLES, type Permission } from './permissions.ts';

// The matrix in docs/dashboard.md is the one in permissions.ts: row for row, cell for cell.
const DOC = new URL('../../../../docs/dashboard.md', import.meta.url);

describe('the permission matrix', () => {
  it('is the one docs/dashboard.md shows', () => {
    const text = readFileSync(DOC, 'utf8');
    const table = text.slice(text.indexOf('<!-- permissions:start -->'), text.indexOf('<!-- permissions:end -->'));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    const documented = rows.map((line) => {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
      const permission = /^`([^`]+)`/.exec(cells[0]!)![1] as Permission;
      return [permission, ROLES.filter((_, i) => cells[i + 1] === 'yes')] as const;
    });
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(Object.entries(PERMISSIONS).map(([p, roles]) => [p, ROLES.filter((r) => (roles as readonly string[]).includes(r))])));
  });

  it('gives the owner everything and the viewer only reading', () => {
    for (const permission of Object.keys(PERMISSIONS) as Permission[]) expect(can('owner', permission)).toBe(true);
    expect((Object.keys(PERMISSIONS) as Permission[]).filter((p) => can('viewer', p))).toEqual(['dashboard.view']);
  });
});
