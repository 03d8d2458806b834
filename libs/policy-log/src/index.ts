export { GENESIS_HASH, canonicalJson, chainedFields, entryHash } from './chain.ts';
export { toFactRecord, fromFactRecord } from './facts.ts';
export { toDecidedEvent, toSendCommand } from './decided-event.ts';
export { engineStep, type StepResult } from './engine-step.ts';
export { insertEntries, storedCopy } from './store.ts';
export { project, ProjectionBatch, ProjectionChanges, type SuppressionOp } from './projections.ts';
