// The API's room (services/api/src) and the dashboard's (libs/dashboard/src) have no import
// circles, between files or between the dashboard's slices (its top-level folders: a slice that
// needs a piece of another's, which needs one of its own, shares that piece from a module below
// both), and their production modules import no test support. A regex over the import and
// export lines is enough here: every import in these trees is a static, relative `.ts` path or a
// package name (`@gw/dashboard` is followed into its source so a circle across the rooms shows).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOMS = ['services/api/src', 'libs/dashboard/src'];
const PACKAGES: Record<string, string> = { '@gw/dashboard': 'libs/dashboard/src/index.ts' };
const SPECIFIER = /^\s*(?:import|export)\b[^;]*?['"]([^'"]+)['"]/gm;

const isTest = (file: string) => /\.test\.ts$/.test(file);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !isTest(entry.name) ? [path] : [];
  });
}

/** Each production module's imports, as repository paths (packages other than ours are left out). */
export function importGraph(rooms: string[] = ROOMS): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of rooms.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].flatMap(([, spec]) => {
      if (spec!.startsWith('.')) return [relative(ROOT, resolve(ROOT, dirname(file), spec!))];
      const own = PACKAGES[spec!];
      return own ? [own] : [];
    });
    graph.set(file, targets);
  }
  return graph;
}

/** The dashboard's modules grouped by slice: `libs/dashboard/src/<slice>/…` (a top-level file is its own). */
export function sliceGraph(graph: Map<string, string[]>, room = 'libs/dashboard/src/'): Map<string, string[]> {
  const sliceOf = (file: string) => (file.startsWith(room) ? file.slice(room.length).split('/')[0]! : null);
  const slices = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = sliceOf(file);
    if (from === null) continue;
    const edges = slices.get(from) ?? new Set<string>();
    for (const to of targets.map(sliceOf)) if (to !== null && to !== from) edges.add(to);
    slices.set(from, edges);
  }
  return new Map([...slices].map(([slice, edges]) => [slice, [...edges]]));
}

/** Every circle found by a depth-first walk, each as the path that closes it. */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the import graph of the API and the dashboard', () => {
  const graph = importGraph();

  it('is read (the walk sees both rooms and the package edge between them)', () => {
    expect(graph.size).toBeGreaterThan(80);
    expect(graph.get('services/api/src/app.ts')).toContain('libs/dashboard/src/index.ts');
  });

  it('has no circle', () => {
    expect(cycles(graph).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('has no circle between the dashboard\'s slices', () => {
    expect(cycles(sliceGraph(graph)).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  it('finds a circle when there is one (the checker checks)', () => {
    const circle = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
    expect(cycles(circle)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('has no production module importing test support (test/ or a testing folder)', () => {
    const reachesTests = [...graph].flatMap(([file, targets]) => targets.filter((t) => t.startsWith('test/') || /\/testing\//.test(t)).map((t) => `${file} -> ${t}`));
    expect(reachesTests).toEqual([]);
  });

  it('keeps the rooms apart: the API reaches the dashboard through its package only, the dashboard never reaches a service', () => {
    const crossings = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((t) => (file.startsWith('services/api/') && t.startsWith('libs/dashboard/') && t !== PACKAGES['@gw/dashboard']) || (file.startsWith('libs/dashboard/') && t.startsWith('services/')))
        .map((t) => `${file} -> ${t}`),
    );
    expect(crossings).toEqual([]);
  });
});
