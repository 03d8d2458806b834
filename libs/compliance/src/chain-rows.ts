// One partition chain's policy_log rows in log order, read in keyset pages (log_id past the last
// row read, on the (partition_chain, log_id) index): verify holds one page per chain, whatever the
// size of the log, and the reader can be asked for the next row whenever its caller needs it.
// With `prefetch`, the next page is asked for as soon as a page arrives: Postgres prepares it
// (~60 ms for 2,000 whole rows, jsonb to text) while the caller works through this one, instead
// of the caller waiting for it page after page (a third of verify's main thread was that wait).
// For a reader walked to its chain's end (every page it asks for is taken). Pages are of 1,000
// rows, so a prefetching reader holds as many rows as one of 2,000 held.
import { sql, z, type Queryable } from '@gw/db';

const PAGE = 1000;

/** The rows a chain reader reads: the columns selected, and the parser each row goes through. */
export interface ChainRowType<T extends z.ZodTypeAny> {
  columns: readonly string[];
  parser: T;
}

/** A row type whose columns are its zod object's keys. */
export const rowTypeOf = <T extends z.ZodObject<z.ZodRawShape>>(row: T): ChainRowType<T> => ({ columns: Object.keys(row.shape), parser: row });

export class ChainRows<T extends z.ZodTypeAny> {
  private page: ReadonlyArray<z.infer<T>> = [];
  private at = 0;
  private exhausted = false;
  /** The log id of the last row taken (-1 before the first). */
  lastTaken = -1;
  private after = -1;
  /** The next page, asked for already (prefetch). */
  private next: Promise<ReadonlyArray<z.infer<T>>> | null = null;
  private readonly columns: ReturnType<typeof sql.join>;

  constructor(
    private readonly db: Queryable,
    private readonly row: ChainRowType<T>,
    readonly chain: number,
    private readonly options: { customers?: string[] | null; prefetch?: boolean } = {},
  ) {
    this.columns = sql.join(row.columns.map((column) => sql.identifier([column])), sql.fragment`, `);
  }

  /** The next row, not taken; null past the chain's end. */
  async peek(): Promise<z.infer<T> | null> {
    if (this.at < this.page.length) return this.page[this.at]!;
    if (this.exhausted) return null;
    const asked = this.next ?? this.query();
    this.next = null;
    this.page = await asked;
    this.at = 0;
    if (this.page.length < PAGE) this.exhausted = true;
    if (this.page.length === 0) return null;
    this.after = (this.page[this.page.length - 1] as { log_id: number }).log_id;
    if (this.options.prefetch && !this.exhausted) {
      this.next = this.query();
      // Awaited by the next peek, which gets its error; until then it must not count as unhandled.
      this.next.catch(() => undefined);
    }
    return this.page[0]!;
  }

  private query(): Promise<ReadonlyArray<z.infer<T>>> {
    const customers = this.options.customers;
    const only = customers ? sql.fragment`AND customer_id = ANY(${sql.array(customers, 'text')})` : sql.fragment``;
    return this.db.any(sql.type(this.row.parser)`
      SELECT ${this.columns} FROM policy_log
       WHERE partition_chain = ${this.chain} AND log_id > ${this.after} ${only}
       ORDER BY log_id LIMIT ${PAGE}`);
  }

  /** Takes the row peek() returned. */
  take(): z.infer<T> {
    const row = this.page[this.at++]!;
    this.lastTaken = (row as { log_id: number }).log_id;
    return row;
  }
}
