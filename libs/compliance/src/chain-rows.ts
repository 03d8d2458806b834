// One partition chain's policy_log rows in log order, read in keyset pages (log_id past the last
// row read, on the (partition_chain, log_id) index): verify holds one page per chain, whatever the
// size of the log, and the reader can be asked for the next row whenever its caller needs it.
import { sql, z, type Queryable } from '@gw/db';

const PAGE = 2000;

export class ChainRows<T extends z.ZodObject<z.ZodRawShape>> {
  private page: ReadonlyArray<z.infer<T>> = [];
  private at = 0;
  private exhausted = false;
  /** The log id of the last row taken (-1 before the first). */
  lastTaken = -1;
  private after = -1;
  private readonly columns: ReturnType<typeof sql.join>;

  constructor(
    private readonly db: Queryable,
    private readonly row: T,
    readonly chain: number,
    private readonly options: { customers?: string[] | null } = {},
  ) {
    this.columns = sql.join(Object.keys(row.shape).map((column) => sql.identifier([column])), sql.fragment`, `);
  }

  /** The next row, not taken; null past the chain's end. */
  async peek(): Promise<z.infer<T> | null> {
    if (this.at < this.page.length) return this.page[this.at]!;
    if (this.exhausted) return null;
    const customers = this.options.customers;
    const only = customers ? sql.fragment`AND customer_id = ANY(${sql.array(customers, 'text')})` : sql.fragment``;
    this.page = await this.db.any(sql.type(this.row)`
      SELECT ${this.columns} FROM policy_log
       WHERE partition_chain = ${this.chain} AND log_id > ${this.after} ${only}
       ORDER BY log_id LIMIT ${PAGE}`);
    this.at = 0;
    if (this.page.length < PAGE) this.exhausted = true;
    if (this.page.length === 0) return null;
    this.after = (this.page[this.page.length - 1] as { log_id: number }).log_id;
    return this.page[0]!;
  }

  /** Takes the row peek() returned. */
  take(): z.infer<T> {
    const row = this.page[this.at++]!;
    this.lastTaken = (row as { log_id: number }).log_id;
    return row;
  }
}
