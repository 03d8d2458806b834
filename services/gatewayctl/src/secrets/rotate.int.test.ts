import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import { deriveKeyId, SEAL_USES, SecretBox } from '@gw/security';
import { sealLegacyV1, sealLegacyV2 } from '../../../../libs/security/src/testing.ts';
import { gatewayctl } from '../../../../test/support/cli.ts';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { SEALED_COLUMNS } from './columns.ts';
import { resealRow, rotateSecrets, type RotateReport, type StatusReport } from './rotate.ts';

// `gatewayctl secrets rotate|status` against real Postgres: rows sealed with an older key (v2 with
// its kid, and legacy v1) are inserted into the migrated tables, then rotated to a new key.
const OLD = 'old-key-material-0123456789abcdef';
const NEW = 'new-key-material-fedcba9876543210';
const FOREIGN = 'a-key-nobody-configured-000000000';

let isolation: Isolation;
let pool: Pool;
let env: Record<string, string>;
/** Every plain secret inserted, by table and row id. */
let plains: Map<string, string>;

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 4 });
  env = { ...isolation.env, GATEWAY_ENV: '', GATEWAY_SECRET_KEY: NEW, GATEWAY_SECRET_KEYS_PREVIOUS: OLD, GATEWAY_SECRET_KEY_ID: '' };
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

beforeEach(async () => {
  await pool.query(sql.typeAlias('void')`TRUNCATE webhook_endpoints, pbx_integrations, instances, users, customers CASCADE`);
  plains = new Map();
});

const CreatedId = z.object({ id: z.number() });

async function seed(rows: { instances: Array<[id: string, sealed: (plain: string, use: string) => string]>; pbx?: Array<[instance: string, sealed: ((plain: string) => string) | null]>; webhooks?: Array<[instance: string, sealed: (plain: string) => string]>; users?: Array<[id: string, sealed: (plain: string) => string]> }) {
  await pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES ('cus_1', 'Acme')`);
  for (const [id, seal] of rows.instances) {
    const plain = `manager-key-${id}`;
    plains.set(`instances/${id}`, plain);
    await pool.query(sql.typeAlias('void')`
      INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc) VALUES (${id}, 'cus_1', ${id}, 'http://127.0.0.1:1', ${id}, ${seal(plain, SEAL_USES.managerApiKey(id))})`);
  }
  for (const [instance, seal] of rows.pbx ?? []) {
    const plain = `pbxsig_${instance}`;
    const id = await pool.oneFirst(sql.type(CreatedId)`
      INSERT INTO pbx_integrations (customer_id, instance_id, secret_hash, hmac_secret_enc, templates, enabled_events) VALUES ('cus_1', ${instance}, '\\x00', ${seal ? seal(plain) : null}, '{}', '{}') RETURNING id`);
    if (seal) plains.set(`pbx_integrations/${id}`, plain);
  }
  for (const [instance, seal] of rows.webhooks ?? []) {
    const plain = `whsec_${instance}`;
    plains.set(`webhook_endpoints/${instance}`, plain);
    await pool.query(sql.typeAlias('void')`
      INSERT INTO webhook_endpoints (instance_id, customer_id, destination_url, events, status, signing_secret_enc) VALUES (${instance}, 'cus_1', 'https://hooks.example.com', '{}', 'active', ${seal(plain)})`);
  }
  for (const [id, seal] of rows.users ?? []) {
    const plain = `TOTPSECRET${id.toUpperCase()}`;
    plains.set(`users/${id}`, plain);
    await pool.query(sql.typeAlias('void')`INSERT INTO users (id, email, password_hash, totp_secret_enc) VALUES (${id}, ${`${id}@example.test`}, 'x', ${seal(plain)})`);
  }
}

const SealedRow = z.object({ id: z.union([z.string(), z.number()]), sealed: z.string() });
const InstanceSecret = z.object({ sealed: z.string() });

/** Every sealed value in the database, by table and row id. */
async function sealedValues(): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const spec of SEALED_COLUMNS) {
    const [table, key, column] = [sql.identifier([spec.table]), sql.identifier([spec.key]), sql.identifier([spec.column])];
    const rows = await pool.any(sql.type(SealedRow)`SELECT ${key} AS id, ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL`);
    for (const row of rows) values.set(`${spec.table}/${String(row.id)}`, row.sealed);
  }
  return values;
}

const old = new SecretBox(OLD);
const sealedOld = (plain: string, use = '') => old.seal(plain, use);
const legacyOld = (plain: string) => sealLegacyV1(OLD, plain);
const sealedNew = (plain: string, use = '') => new SecretBox(NEW).seal(plain, use);
/** The current key, in the form before uses (v2): rotate re-seals it as v3. */
const olderFormNew = (plain: string) => sealLegacyV2(NEW, plain);
const sealedForeign = (plain: string, use = '') => new SecretBox(FOREIGN).seal(plain, use);

function expectNoSecrets(output: string) {
  for (const secret of [OLD, NEW, FOREIGN, ...plains.values()]) expect(output).not.toContain(secret);
}

describe('gatewayctl secrets rotate', () => {
  it('re-seals every value with the new key (v2 of the old key and legacy v1), and a second run changes nothing', async () => {
    await seed({
      instances: [['ins_a', sealedOld], ['ins_b', legacyOld], ['ins_c', sealedNew], ['ins_d', olderFormNew]],
      pbx: [['ins_a', sealedOld], ['ins_b', null], ['ins_c', legacyOld]],
      webhooks: [['ins_a', sealedOld], ['ins_b', legacyOld]],
      users: [['usr_a', sealedOld], ['usr_b', sealedNew]],
    });
    const before = await sealedValues();

    const status = await gatewayctl(env, 'secrets', 'status', '--json');
    expect(status.code, status.stderr + status.stdout).toBe(0);
    const shown = JSON.parse(status.stdout) as StatusReport;
    expect(shown.current_kid).toBe(deriveKeyId(NEW));
    expect(shown.previous_kids).toEqual([deriveKeyId(OLD)]);
    expect(shown.tables.find((t) => t.table === 'instances')).toEqual({
      table: 'instances', column: 'manager_api_key_enc', sealed: 4, current: 1, older_form: 2, by_kid: { [deriveKeyId(OLD)]: 1, [deriveKeyId(NEW)]: 2 }, legacy_v1: 1, not_sealed: 0, unknown_kids: [],
    });
    expect(shown.tables.find((t) => t.table === 'pbx_integrations')).toMatchObject({ sealed: 2, current: 0, legacy_v1: 1, by_kid: { [deriveKeyId(OLD)]: 1 } });
    // usr_b is v3 under the current key but sealed for no use (before its column was bound): not current.
    expect(shown.tables.find((t) => t.table === 'users')).toMatchObject({ sealed: 2, current: 0, by_kid: { [deriveKeyId(OLD)]: 1, [deriveKeyId(NEW)]: 1 } });

    const rotated = await gatewayctl(env, 'secrets', 'rotate', '--json');
    expect(rotated.code, rotated.stderr + rotated.stdout).toBe(0);
    expectNoSecrets(rotated.stdout + rotated.stderr);
    const report = JSON.parse(rotated.stdout) as RotateReport;
    expect(report).toEqual({
      current_kid: deriveKeyId(NEW),
      tables: [
        { table: 'instances', column: 'manager_api_key_enc', resealed: 3, already_current: 1, failed: 0 },
        { table: 'pbx_integrations', column: 'hmac_secret_enc', resealed: 2, already_current: 0, failed: 0 },
        { table: 'webhook_endpoints', column: 'signing_secret_enc', resealed: 2, already_current: 0, failed: 0 },
        { table: 'webhook_endpoints', column: 'previous_signing_secret_enc', resealed: 0, already_current: 0, failed: 0 },
        { table: 'users', column: 'totp_secret_enc', resealed: 2, already_current: 0, failed: 0 },
      ],
      failed: [],
    });

    // Every value now opens with the new key alone, to the secret it held before.
    const after = await sealedValues();
    const newAlone = new SecretBox(NEW);
    expect([...after.keys()].sort()).toEqual([...plains.keys()].sort());
    const useOf = (row: string) => {
      const [table, id] = row.split('/') as [string, string];
      const uses: Record<string, (id: string) => string> = {
        instances: SEAL_USES.managerApiKey,
        pbx_integrations: SEAL_USES.pbxHmacSecret,
        webhook_endpoints: SEAL_USES.webhookSigningSecret,
        users: SEAL_USES.totpSecret,
      };
      return uses[table]!(id);
    };
    for (const [row, sealed] of after) {
      expect(SecretBox.keyIdOf(sealed), row).toBe(deriveKeyId(NEW));
      expect(SecretBox.versionOf(sealed), row).toBe('v3');
      expect(newAlone.open(sealed, useOf(row)), row).toBe(plains.get(row));
    }
    // Bound to its row: the manager apikey of one instance does not open as another's, nor the
    // re-sealed webhook, PBX and TOTP secrets (the unbound usr_b included) as another row's.
    expect(() => newAlone.open(after.get('instances/ins_a')!, SEAL_USES.managerApiKey('ins_b'))).toThrow(/for this use/);
    expect(() => newAlone.openFormerlyUnbound(after.get('webhook_endpoints/ins_a')!, SEAL_USES.webhookSigningSecret('ins_b'))).toThrow(/for this use/);
    expect(() => newAlone.openFormerlyUnbound(after.get('users/usr_b')!, SEAL_USES.totpSecret('usr_a'))).toThrow(/for this use/);
    const [pbxA, pbxC] = [...after.keys()].filter((row) => row.startsWith('pbx_integrations/')).map((row) => row.split('/')[1]!);
    expect(() => newAlone.openFormerlyUnbound(after.get(`pbx_integrations/${pbxA}`)!, SEAL_USES.pbxHmacSecret(pbxC!))).toThrow(/for this use/);
    expect(after.get('users/usr_b')).not.toBe(before.get('users/usr_b')); // unbound under the current key: re-sealed bound
    // The current key in the older form (v2) was rewritten too.
    expect(after.get('instances/ins_d')).not.toBe(before.get('instances/ins_d'));
    expect(after.get('instances/ins_c')).toBe(before.get('instances/ins_c')); // already current: untouched

    const again = await rotateSecrets(pool, SecretBox.fromConfig({ fromEnv: NEW, file: '', previous: [OLD] }));
    expect(again.tables.map((t) => [t.table, t.resealed, t.already_current])).toEqual([['instances', 0, 4], ['pbx_integrations', 0, 2], ['webhook_endpoints', 0, 2], ['webhook_endpoints', 0, 0], ['users', 0, 2]]);
    expect(await sealedValues()).toEqual(after);
  });

  it('reports a value whose kid no key has, by table, row and kid, re-seals the rest and exits non-zero', async () => {
    await seed({
      instances: [['ins_a', sealedOld], ['ins_lost', sealedForeign]],
      webhooks: [['ins_a', legacyOld], ['ins_lost', sealedForeign]],
    });
    const lostBefore = (await sealedValues()).get('instances/ins_lost');

    const rotated = await gatewayctl(env, 'secrets', 'rotate', '--json');
    expect(rotated.code).toBe(1);
    expectNoSecrets(rotated.stdout + rotated.stderr);
    const report = JSON.parse(rotated.stdout) as RotateReport;
    expect(report.failed).toEqual([
      { table: 'instances', column: 'manager_api_key_enc', id: 'ins_lost', kid: deriveKeyId(FOREIGN), reason: 'unknown_kid' },
      { table: 'webhook_endpoints', column: 'signing_secret_enc', id: 'ins_lost', kid: deriveKeyId(FOREIGN), reason: 'unknown_kid' },
    ]);
    expect(report.tables.map((t) => [t.table, t.resealed, t.failed])).toEqual([['instances', 1, 1], ['pbx_integrations', 0, 0], ['webhook_endpoints', 1, 1], ['webhook_endpoints', 0, 0], ['users', 0, 0]]);
    const after = await sealedValues();
    expect(after.get('instances/ins_lost')).toBe(lostBefore); // left as it was
    expect(new SecretBox(NEW).open(after.get('instances/ins_a')!, SEAL_USES.managerApiKey('ins_a'))).toBe(plains.get('instances/ins_a'));

    // For a person: the same exit code, and a line on stderr naming the rows and the kid.
    const human = await gatewayctl(env, 'secrets', 'rotate');
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('instances ins_lost');
    expect(human.stderr).toContain(deriveKeyId(FOREIGN));
    expectNoSecrets(human.stdout + human.stderr);
  });

  it('never overwrites a value that changed after it was read', async () => {
    await seed({ instances: [['ins_a', sealedOld]] });
    const ring = new SecretBox(NEW, { previous: [OLD] });
    const spec = SEALED_COLUMNS.find((c) => c.table === 'instances')!;
    const stale = old.seal('the-secret-before-a-concurrent-rotation', SEAL_USES.managerApiKey('ins_a'));

    // The row holds another old-key value than the one read: that one is re-sealed, not the stale one.
    const outcome = await pool.transaction((tx) => resealRow(tx, spec, ring, 'ins_a', stale));
    expect(outcome).toBe('resealed');
    const now = await pool.oneFirst(sql.type(InstanceSecret)`SELECT manager_api_key_enc AS sealed FROM instances WHERE id = 'ins_a'`);
    expect(ring.open(now, SEAL_USES.managerApiKey('ins_a'))).toBe(plains.get('instances/ins_a'));

    // A secret set meanwhile with the current key stays as it is.
    const fresh = ring.seal('a-secret-set-meanwhile', SEAL_USES.managerApiKey('ins_a'));
    await pool.query(sql.typeAlias('void')`UPDATE instances SET manager_api_key_enc = ${fresh} WHERE id = 'ins_a'`);
    expect(await pool.transaction((tx) => resealRow(tx, spec, ring, 'ins_a', stale))).toBe('current');
    expect(await pool.oneFirst(sql.type(InstanceSecret)`SELECT manager_api_key_enc AS sealed FROM instances WHERE id = 'ins_a'`)).toBe(fresh);
  });

  it('refuses to run without GATEWAY_SECRET_KEY outside local runs, naming the variable', async () => {
    await seed({ instances: [['ins_a', sealedOld]] });
    const before = await sealedValues();
    const refused = await gatewayctl({ ...env, GATEWAY_SECRET_KEY: '' }, 'secrets', 'rotate', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatch(/GATEWAY_SECRET_KEY is not set.*openssl rand -base64 32/);
    expectNoSecrets(refused.stdout + refused.stderr);
    expect(await sealedValues()).toEqual(before);
  });
});
