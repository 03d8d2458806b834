// The commit a change is measured against, checked out beside this one (a git worktree under
// .run/bench), so both run in one `make bench` on the same machine and the same data.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The commit before the decider, verify and query-layer rework (issue 15): the last commit of the
 * fault-tolerance work. BENCH_BEFORE names another one.
 */
export const BEFORE_COMMIT = process.env.BENCH_BEFORE ?? '3f42294';

/**
 * A worktree of `commit` with a node_modules of its own: its @gw packages are links into that
 * worktree (each tree runs its own code), every other package is a link to this checkout's.
 * Null (with the reason said) when it cannot be had, e.g. a shallow clone without the commit.
 */
export function beforeTree(commit = BEFORE_COMMIT, say: (line: string) => void = console.log): string | null {
  const dir = `${ROOT}.run/bench/before-${commit}`;
  try {
    if (!existsSync(`${dir}/package.json`)) {
      mkdirSync(`${ROOT}.run/bench`, { recursive: true });
      execFileSync('git', ['-C', ROOT, 'worktree', 'prune'], { stdio: 'ignore' });
      execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', '--force', dir, commit], { stdio: 'ignore' });
    }
    const modules = `${dir}/node_modules`;
    if (!existsSync(`${modules}/@gw`)) {
      mkdirSync(`${modules}/@gw`, { recursive: true });
      for (const name of readdirSync(`${ROOT}node_modules`)) {
        if (name !== '@gw' && !existsSync(`${modules}/${name}`)) symlinkSync(`${ROOT}node_modules/${name}`, `${modules}/${name}`);
      }
      // Workspace links are relative (../../libs/x): the same text points into the worktree.
      for (const name of readdirSync(`${ROOT}node_modules/@gw`)) symlinkSync(readlinkSync(`${ROOT}node_modules/@gw/${name}`), `${modules}/@gw/${name}`);
    }
    return dir;
  } catch (error) {
    say(`bench: compare: no worktree of ${commit} (${(error as Error).message.split('\n')[0]}); the side-by-side figures are skipped`);
    return null;
  }
}
