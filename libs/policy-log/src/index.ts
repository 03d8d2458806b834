export { GENESIS_HASH, canonicalJson, chainedFields, entryHash } from './chain.ts';
export { toFactRecord, fromFactRecord } from './facts.ts';
export { toDecidedEvent, toSendCommand } from './decided-event.ts';
export { engineStep, type StepResult } from './engine-step.ts';
export { toLogRow, fromLogRow, storedCopy, type PolicyLogRow } from './entry.ts';
export { insertEntries } from './store.ts';
export { project, ProjectionBatch, ProjectionChanges, type SuppressionOp } from './projections.ts';
