import { createSqlTag, SchemaValidationError, type Interceptor, type QueryResultRow, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';

/**
 * The one `sql` tag. A query that reads rows states their shape with `sql.type(zodObject)`; its
 * rows are parsed at the boundary (rowParser below) and typed from the schema. A statement that
 * returns no rows is `sql.typeAlias('void')`.
 */
export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});

/**
 * Parses every row of a typed query with its schema; a row that does not match raises
 * SchemaValidationError naming the query (never the row's values, which our logs do not show).
 * Synchronous: rows are small, and an async parse per row costs more than it spares.
 */
export function rowParser(): Interceptor {
  return {
    name: 'row-parser',
    transformRow: (context, query, row) => {
      const { resultParser } = context;
      if (!resultParser) return row;
      const parsed = resultParser.safeParse(row);
      if (!parsed.success) throw new SchemaValidationError(query, row, parsed.error.issues);
      return parsed.data as QueryResultRow;
    },
  };
}

/**
 * A JSON parameter, for batches and records typed by interfaces (the generated event types).
 * sql.json would do, but it sorts every object's keys (safe-stable-stringify), three times the
 * cost of JSON.stringify on the batches the consumers write; and TypeScript does not see an
 * interface as the index signature its SerializableValue asks for.
 */
export function jsonOf(value: object): FragmentSqlToken {
  return sql.fragment`${JSON.stringify(value)}::json`;
}

export { z };
