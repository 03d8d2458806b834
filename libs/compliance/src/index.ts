// The compliance checks over the policy log, shared by the operator (gatewayctl policy-log
// export / verify, projections rebuild) and the customer (the dashboard's policy-log export and
// "verify my log"): one implementation of the export, the chain checks and the replay.
export type { ComplianceDeps, ComplianceConnection } from './deps.ts';
export { yielder, type ProgressCallback, type ProgressEvent } from './progress.ts';
export { Count, POLICY_LOG_COLUMNS, cursor, parseDetail, sourceOf } from './entries.ts';
export {
  exportPolicyLog,
  exportLines,
  exportRecord,
  policyLogWhere,
  ExportAborted,
  CSV_COLUMNS,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportOptions,
  type PolicyLogFilter,
} from './export.ts';
export { ChainWalk, checkChains, chainHeads, type ChainHead, type ChainPosition } from './chains.ts';
export { readDeadLetters, skippedPositions, type DeadLetter, type DeadLetterStatus } from './dead-letters.ts';
export { comparable, differingFields, digests, sameCopy, Findings, type CheckName, type Divergence, type Finding } from './copies.ts';
export { Replayer, digestOf, expectedEntry, replayCustomerEvents, replayFields, toScopeEnds, type ReplayOutcome, type ReplayScope, type ReplayStep } from './replay.ts';
export { verifyPolicyLog, runVerify, type VerifyOptions, type VerifyReport, type VerifyRun } from './verify.ts';
export { verifyCustomerLog, customerReport, CHECK_MEANINGS, CHECKS_EXPLAINED, type CustomerVerifyReport, type CustomerDivergence } from './customer-report.ts';
