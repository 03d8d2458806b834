import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { migrate } from './migrate.ts';
import { createPool, type Pool } from './pool.ts';
import { sql, z } from './sql.ts';

// functions/*.sql are the one definition of each function: every migrate applies them after the
// numbered migrations, so a database whose function drifted (or was made by an older body) gets
// the file's body back, and no numbered migration has to restate it.
let isolation: Isolation;
let pool: Pool;
const FILE = new URL('../functions/policy_apply_batch.sql', import.meta.url);
const Source = z.object({ prosrc: z.string() });
const body = () => pool.oneFirst(sql.type(Source)`SELECT prosrc FROM pg_proc WHERE proname = 'policy_apply_batch'`);

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 2 });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

describe('repeatable functions', () => {
  it('policy_apply_batch is the body of libs/db/functions/policy_apply_batch.sql, one definition only', async () => {
    const file = readFileSync(FILE, 'utf8');
    const fileBody = /AS \$\$([\s\S]*)\$\$;/.exec(file)![1];
    expect(await body()).toBe(fileBody);
    const Count = z.object({ n: z.number() });
    expect(await pool.oneFirst(sql.type(Count)`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'policy_apply_batch'`)).toBe(1);
  });

  it('every migrate puts the file\'s body back, with no numbered migration pending', async () => {
    const fileBody = await body();
    // The same signature with a body that does nothing: a drifted database.
    const drifted = readFileSync(FILE, 'utf8').replace(/AS \$\$[\s\S]*\$\$;/, () => 'AS $$ BEGIN END; $$;');
    const client = new pg.Client({ connectionString: isolation.databaseUrl });
    await client.connect();
    await client.query(drifted).finally(() => client.end());
    expect(await body()).toBe(' BEGIN END; ');
    await migrate(isolation.databaseUrl);
    expect(await body()).toBe(fileBody);
  });
});
