export { createPool, readSnapshot, type Pool, type PoolLimits, type Queryable, type Transaction } from './pool.ts';
export { sql, jsonOf, z } from './sql.ts';
export { migrate, ensureDatabase, dropDatabase } from './migrate.ts';
export {
  BackendTerminatedError,
  ConnectionError,
  NotFoundError,
  SchemaValidationError,
  StatementTimeoutError,
  UniqueIntegrityConstraintViolationError,
  ForeignKeyIntegrityConstraintViolationError,
  type ValueExpression,
} from 'slonik';
