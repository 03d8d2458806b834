export { GroupCommit, ItemFailed, QueueFull, type GroupCommitOptions } from './group-commit.ts';
export { BatchedLookup } from './batched-lookup.ts';
