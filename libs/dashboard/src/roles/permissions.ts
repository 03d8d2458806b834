// The dashboard's permission matrix, defined once: the routes check it, docs/dashboard.md shows
// it (a test keeps the two equal), and a test tries every route with every role.
export const ROLES = ['owner', 'admin', 'developer', 'compliance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  /** See instances, keys (never their secrets), webhooks, PBX settings, usage against the plan. */
  'dashboard.view': ['owner', 'admin', 'developer', 'compliance', 'viewer'],
  /** Create, pair, disconnect and delete instances. */
  'instances.manage': ['owner', 'admin'],
  /** Send a test message from an instance's page (through the guarded path). */
  'instances.test_send': ['owner', 'admin', 'developer'],
  /** Create and revoke API keys (creating one asks for a TOTP code again). */
  'api_keys.manage': ['owner', 'admin', 'developer'],
  /** Configure webhooks, rotate their secrets, resend and recover deliveries. */
  'webhooks.manage': ['owner', 'admin', 'developer'],
  /** Create PBX integrations, rotate their secrets, edit their templates. */
  'pbx.manage': ['owner', 'admin', 'developer'],
  /** Read the policy log and its decisions, export it (CSV or NDJSON) and download a verify report of it. */
  'policy_log.read': ['owner', 'admin', 'compliance'],
  /** See what happened to one message: its decision with every rule, its delivery states, its webhook deliveries. */
  'messages.read': ['owner', 'admin', 'developer', 'compliance'],
  /** Read received messages (sender, text, time) in the inbound log. */
  'inbound.read': ['owner', 'admin', 'developer', 'compliance'],
  /** See opted-out and suppressed recipients, their causes and history, and export them. */
  'suppressions.read': ['owner', 'admin', 'developer', 'compliance'],
  /** Add a manual suppression, or lift one, with a reason (an opt-out is lifted only by the recipient). */
  'suppressions.manage': ['owner', 'admin'],
  /** Ask the operator for higher limits (granted after manual review). */
  'limits.request': ['owner', 'admin'],
  /** Invite people and change their roles (asks for a TOTP code again). */
  'members.manage': ['owner', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export const can = (role: Role, permission: Permission): boolean => (PERMISSIONS[permission] as readonly Role[]).includes(role);

/** Roles that must have enrolled in MFA before they may change anything. */
export const MFA_BEFORE_CHANGES: readonly Role[] = ['owner', 'admin'];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);
