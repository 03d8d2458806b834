// The number guard (issue 27, docs/policy.md "Number guard"): its config, state, evolve and react
// parts, rules and the summary the dashboard and projections show.
export { DEFAULT_GUARD_CONFIG, GUARD_RETENTION, validateGuardConfig, type GuardConfig, type FirstContactLimits, type FirstContactCaps, type WarmUpStep, type RestrictionConfig } from './config.ts';
export { RESTRICTION_SIGNALS } from './events.ts';
export { type InstanceGuard } from './state.ts';
export { evolveGuard } from './evolve-guard.ts';
export { reactToRestriction, NETWORK_RESTRICTION } from './react-guard.ts';
export { instanceNotRestricted, firstContactLimit } from './rules.ts';
export { isFirstContact } from './contacts.ts';
export { firstContactAllowance, type FirstContactAllowance } from './allowance.ts';
export { guardSummary, type GuardSummary } from './summary.ts';
