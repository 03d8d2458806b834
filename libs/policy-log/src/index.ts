export { GENESIS_HASH, canonicalJson, chainedFields, entryHash } from './chain.ts';
export { appendFacts, toFactRecord, fromFactRecord } from './facts.ts';
export { toDecidedEvent, toSendCommand } from './decided-event.ts';
export { engineStep, type StepResult } from './engine-step.ts';
export { toLogRow, fromLogRow, storedCopy, PolicyLogRow, type NewPolicyLogRow } from './entry.ts';
export { insertEntries } from './store.ts';
export { applyPolicyBatch, ProjectionChanges, type PolicyBatchWrite, type SuppressionOp } from './projections.ts';
export { instanceGuardRows, TouchedInstances, type InstanceGuardRow } from './instance-guard.ts';
export { planStateWrites, readPolicyState, readPolicyStates, type StateWrites, type StoredPolicyState } from './state-store.ts';
