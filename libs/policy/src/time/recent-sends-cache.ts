/**
 * Deprecated, and empty: the bulk check no longer needs a cache. Version 6 of the state keeps,
 * per body, the times of its distinct recipients (time/send-memory.ts), so the check is a lookup
 * and a binary search without one. decide and handleCommand still accept an instance and ignore
 * it, so that callers which pass one (the policy consumer, the policy-log step, the compliance
 * replay) keep compiling until they stop passing it; then this class goes.
 */
export class RecentSendsCache {}
