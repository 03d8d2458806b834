import { sql, z, type Pool, type Queryable } from '@gw/db';
import { SecretBox, UnknownKeyId } from '@gw/security';
import { SEALED_COLUMNS, type SealedColumn } from './columns.ts';

/** A sealed value the keyring could not open: named by table, row and kid, never by its value. */
export interface UnopenedValue {
  table: string;
  column: string;
  id: string;
  /** The kid the value names; null for a value sealed before key ids (v1) or not sealed at all. */
  kid: string | null;
  /** unknown_kid: no configured key has that id; does_not_open: the key (or, for v1, every key) fails to open it; not_sealed: not a sealed value. */
  reason: 'unknown_kid' | 'does_not_open' | 'not_sealed';
}

export interface RotateReport {
  current_kid: string;
  tables: Array<{ table: string; column: string; resealed: number; already_current: number; failed: number }>;
  failed: UnopenedValue[];
}

export interface StatusReport {
  current_kid: string;
  previous_kids: string[];
  tables: Array<{
    table: string;
    column: string;
    /** Non-null values in the column. */
    sealed: number;
    /** Of those, sealed in the current form (v3, bound to its use) with the current key (nothing for `rotate` to do). */
    current: number;
    /** Sealed in an older form (v1, v2: no use, SHA-256 key), whatever their key: `rotate` re-seals them as v3. */
    older_form: number;
    /** Values per kid (v2). */
    by_kid: Record<string, number>;
    /** Values sealed before key ids (v1): `rotate` gives them one. */
    legacy_v1: number;
    /** Values that are not sealed values at all. */
    not_sealed: number;
    /** Kids found here that no configured key has: `rotate` cannot open those values. */
    unknown_kids: string[];
  }>;
}

type RowOutcome = 'resealed' | 'current' | 'gone' | UnopenedValue;

// The key column is text or int (SealedColumn.key); ids are reported as text.
const SealedRow = z.object({ id: z.union([z.string(), z.number()]), sealed: z.string() });
/** What a row's column holds now (null: the row is gone, or its value was cleared). */
const CurrentValue = z.object({ sealed: z.string().nullable() });

/** A row that changes this many times while the rotation looks at it is left for the next run. */
const MAX_TRIES = 5;

/**
 * Re-seals one row's value with the current key, unless it already is. The update only applies
 * while the column still holds the value that was read: a secret rotated meanwhile (e.g. `webhook
 * rotate-secret`) is never overwritten with the older one; what is there now is looked at instead.
 */
export async function resealRow(db: Queryable, spec: SealedColumn, box: SecretBox, id: string | number, read: string): Promise<RowOutcome> {
  const table = sql.identifier([spec.table]);
  const key = sql.identifier([spec.key]);
  const column = sql.identifier([spec.column]);
  let value = read;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const use = spec.use(String(id));
    if (box.isCurrent(value, use)) return 'current';
    let plain: string;
    try {
      plain = spec.formerlyUnbound ? box.openFormerlyUnbound(value, use) : box.open(value, use);
    } catch (error) {
      return unopened(spec, id, value, error);
    }
    const updated = await db.query(sql.typeAlias('void')`UPDATE ${table} SET ${column} = ${box.seal(plain, use)} WHERE ${key} = ${id} AND ${column} = ${value}`);
    if (updated.rowCount === 1) return 'resealed';
    const sealed = await db.maybeOneFirst(sql.type(CurrentValue)`SELECT ${column} AS sealed FROM ${table} WHERE ${key} = ${id}`);
    if (sealed === null) return 'gone';
    value = sealed;
  }
  throw new Error(`${spec.table} ${String(id)} changed ${MAX_TRIES} times during the rotation; run it again`);
}

function unopened(spec: SealedColumn, id: string | number, value: string, error: unknown): UnopenedValue {
  const kid = SecretBox.keyIdOf(value);
  const reason = error instanceof UnknownKeyId ? 'unknown_kid' : kid === undefined ? 'not_sealed' : 'does_not_open';
  return { table: spec.table, column: spec.column, id: String(id), kid: kid ?? null, reason };
}

/**
 * `gatewayctl secrets rotate`: every sealed value not sealed with the current key in the current
 * form (v3) is opened with the keyring and sealed again with the current key, bound to its row's
 * use (SealedColumn.use), one transaction per table. Values nothing
 * opens are left as they are and reported (table, row id, kid).
 */
export async function rotateSecrets(pool: Pool, box: SecretBox, columns: readonly SealedColumn[] = SEALED_COLUMNS): Promise<RotateReport> {
  const report: RotateReport = { current_kid: box.currentKid, tables: [], failed: [] };
  for (const spec of columns) {
    const counts = { table: spec.table, column: spec.column, resealed: 0, already_current: 0, failed: 0 };
    const [table, key, column] = [sql.identifier([spec.table]), sql.identifier([spec.key]), sql.identifier([spec.column])];
    await pool.transaction(async (tx) => {
      const rows = await tx.any(sql.type(SealedRow)`SELECT ${key} AS id, ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL ORDER BY ${key}`);
      for (const row of rows) {
        const outcome = await resealRow(tx, spec, box, row.id, row.sealed);
        if (outcome === 'resealed') counts.resealed++;
        else if (outcome === 'current') counts.already_current++;
        else if (outcome !== 'gone') {
          counts.failed++;
          report.failed.push(outcome);
        }
      }
    });
    report.tables.push(counts);
  }
  return report;
}

/** `gatewayctl secrets status`: per table, how many values each kid seals, and which kid is current. */
export async function secretsStatus(pool: Pool, box: SecretBox, columns: readonly SealedColumn[] = SEALED_COLUMNS): Promise<StatusReport> {
  const report: StatusReport = { current_kid: box.currentKid, previous_kids: box.previousKids, tables: [] };
  for (const spec of columns) {
    const column = sql.identifier([spec.column]);
    const rows = await pool.any(sql.type(SealedRow)`SELECT ${sql.identifier([spec.key])} AS id, ${column} AS sealed FROM ${sql.identifier([spec.table])} WHERE ${column} IS NOT NULL`);
    const values = rows.map((row) => row.sealed);
    const table = { table: spec.table, column: spec.column, sealed: values.length, current: 0, older_form: 0, by_kid: {} as Record<string, number>, legacy_v1: 0, not_sealed: 0, unknown_kids: [] as string[] };
    for (const sealed of values) {
      const kid = SecretBox.keyIdOf(sealed);
      if (kid === undefined) table.not_sealed++;
      else if (kid === null) table.legacy_v1++;
      else table.by_kid[kid] = (table.by_kid[kid] ?? 0) + 1;
    }
    table.current = rows.filter((row) => box.isCurrent(row.sealed, spec.use(String(row.id)))).length;
    table.older_form = values.filter((sealed) => SecretBox.versionOf(sealed) === 'v1' || SecretBox.versionOf(sealed) === 'v2').length;
    table.unknown_kids = Object.keys(table.by_kid).filter((kid) => !box.knows(kid)).sort();
    report.tables.push(table);
  }
  return report;
}
