import { afterAll, beforeAll } from 'vitest';
import { createPool, type Pool } from '@gw/db';
import { startStack, type StackServiceName, type Stack } from './stack.ts';

export interface StackSuite {
  readonly stack: Stack;
  /** A Postgres pool on the stack's own database. */
  readonly db: Pool;
}

/** Starts a stack and a database pool for the file's tests, and stops both after them. */
export function useStack(options: { services?: StackServiceName[]; env?: Record<string, string> } = {}): StackSuite {
  let stack: Stack | undefined;
  let db: Pool | undefined;
  beforeAll(async () => {
    stack = await startStack(options.services, options.env);
    db = await createPool(stack.isolation.databaseUrl, { maxConnections: 2 });
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });
  return {
    get stack() {
      if (!stack) throw new Error('the stack is not started yet');
      return stack;
    },
    get db() {
      if (!db) throw new Error('the stack is not started yet');
      return db;
    },
  };
}

/** Polls until the condition holds, failing with a clear message after the timeout. */
export async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
