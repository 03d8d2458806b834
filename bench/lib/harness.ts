// The test harness of a tree: this checkout's, or that of the commit a change is measured against
// (bench/compare/before-tree.ts). Each tree's own harness starts its stack (its services, its
// environment names, its migrations in a database of its own) and makes its accounts with its own
// code, so the side-by-side figures work for any commit whose schema differs from this one's.
import { fileURLToPath } from 'node:url';
import * as accounts from '../../test/support/accounts.ts';
import * as stacks from '../../test/support/stack.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Harness {
  startStack: typeof stacks.startStack;
  demoAccount: typeof accounts.demoAccount;
}

/** The harness of `tree` (a checkout's root); this checkout's when `tree` is absent or is this one. */
export async function harnessOf(tree?: string): Promise<Harness> {
  if (!tree || tree === ROOT) return { startStack: stacks.startStack, demoAccount: accounts.demoAccount };
  // Another tree's modules, loaded through tsx from that tree: its @gw imports resolve into it.
  const [stack, account] = await Promise.all([import(`${tree}/test/support/stack.ts`), import(`${tree}/test/support/accounts.ts`)]);
  return { startStack: (stack as typeof stacks).startStack, demoAccount: (account as typeof accounts).demoAccount };
}
