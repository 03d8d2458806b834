// The compliance checks over the policy log, shared by the operator (gatewayctl policy-log
// export / verify, projections rebuild), the customer (the dashboard's policy-log export and
// "verify my log") and the policy service's watch: one implementation of the export, the chain
// checks and the replay. Only what those callers use is exported; the rest (the chain walk, the
// copy comparisons, the replay thread, the report's wording) stays internal, and its tests import
// it by relative path.
export type { ComplianceDeps } from './deps.ts';
export type { ProgressCallback, ProgressEvent } from './progress.ts';

// The export: gatewayctl policy-log export, the dashboard's download and its listing (same filter).
export { exportPolicyLog, policyLogWhere, ExportAborted, CSV_COLUMNS, type ExportFormat, type PolicyLogFilter } from './export.ts';

// Verification: gatewayctl policy-log verify (the whole log) and the dashboard's "verify my log".
export { verifyPolicyLog, type VerifyReport } from './verify.ts';
export { verifyCustomerLog, CHECKS_EXPLAINED, type CustomerVerifyReport } from './customer-report.ts';

// The policy service's watch: the chains since the last check, and the dead letters.
export { checkChains, type ChainPosition } from './chains.ts';
export { Findings } from './copies.ts';
export { readDeadLetters, skippedPositions, type DeadLetter, type DeadLetterStatus } from './dead-letters.ts';

// gatewayctl projections rebuild and policy-log show: the replay verify runs, and the entry columns.
export { Replayer, digestOf, replayFields } from './replay.ts';
export { Count, POLICY_LOG_COLUMNS, parseDetail, sourceOf } from './entries.ts';
