export { GroupCommit } from './group-commit.ts';
export { BatchedLookup } from './batched-lookup.ts';
