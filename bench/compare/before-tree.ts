// The commit a change is measured against, extracted beside this one (a `git archive` under
// .run/bench: no worktree, nothing in .git changes), so both run in one `make bench` on the same
// machine. Each tree runs its own code end to end: its own test harness starts its own stack,
// its own migrations make its own database, its own CLI makes its accounts and verifies its log.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The last commit before issue 26's one-send-path work (6a8291a), whose limit is "the send path
 * and verify within 10 % of before". BENCH_BEFORE names another commit (any revision git knows).
 */
export const BEFORE_REVISION = process.env.BENCH_BEFORE || '6a8291a^';

/** The short hash of a revision, or null when this clone does not have it (e.g. a shallow one). */
export function resolveCommit(revision = BEFORE_REVISION): string | null {
  try {
    return execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', `${revision}^{commit}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** Package name -> its folder (libs/x, services/y) in a tree, read from the tree's own workspaces. */
function workspaces(tree: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const floor of ['libs', 'services']) {
    if (!existsSync(`${tree}/${floor}`)) continue;
    for (const dir of readdirSync(`${tree}/${floor}`)) {
      const manifest = `${tree}/${floor}/${dir}/package.json`;
      if (existsSync(manifest)) out.set((JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name, `${floor}/${dir}`);
    }
  }
  return out;
}

/**
 * Gives an extracted tree a node_modules: its @gw packages are links into the tree itself (from
 * the tree's own workspaces), every other package, and a workspace's own nested node_modules
 * (libs/db's slonik), a link to this checkout's install.
 */
function linkModules(dir: string): void {
  const modules = `${dir}/node_modules`;
  mkdirSync(`${modules}/@gw`, { recursive: true });
  for (const name of readdirSync(`${ROOT}node_modules`)) {
    if (name !== '@gw' && !existsSync(`${modules}/${name}`)) symlinkSync(`${ROOT}node_modules/${name}`, `${modules}/${name}`);
  }
  for (const [name, folder] of workspaces(dir)) {
    const link = `${modules}/${name}`;
    if (name.startsWith('@gw/') && !existsSync(link)) symlinkSync(`../../${folder}`, link);
    if (existsSync(`${ROOT}${folder}/node_modules`) && !existsSync(`${dir}/${folder}/node_modules`)) symlinkSync(`${ROOT}${folder}/node_modules`, `${dir}/${folder}/node_modules`);
  }
}

/**
 * The tree of `revision` under .run/bench/before-<hash>, made once and reused. Null (with the
 * reason said) when it cannot be had.
 */
export function beforeTree(revision = BEFORE_REVISION, say: (line: string) => void = console.log): { commit: string; dir: string } | null {
  const commit = resolveCommit(revision);
  if (!commit) {
    say(`bench: compare: this clone has no commit ${revision} (BENCH_BEFORE); the side-by-side figures are skipped`);
    return null;
  }
  const dir = `${ROOT}.run/bench/before-${commit}`;
  try {
    if (!existsSync(`${dir}/.complete`)) {
      // Extracted beside its final place and renamed into it: an interrupted run leaves no half tree.
      const partial = `${dir}.partial`;
      rmSync(partial, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(partial, { recursive: true });
      execFileSync('bash', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'archive', ROOT, commit, partial], { stdio: ['ignore', 'ignore', 'pipe'] });
      linkModules(partial);
      execFileSync('touch', [`${partial}/.complete`]);
      renameSync(partial, dir);
    }
    return { commit, dir };
  } catch (error) {
    say(`bench: compare: could not extract ${commit} (${(error as Error).message.split('\n')[0]}); the side-by-side figures are skipped`);
    return null;
  }
}
