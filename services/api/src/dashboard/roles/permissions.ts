// The dashboard's permission matrix, defined once: the routes check it, docs/dashboard.md shows
// it (a test keeps the two equal), and a test tries every route with every role.
export const ROLES = ['owner', 'admin', 'developer', 'compliance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  /** See instances, keys (never their secrets), webhooks, PBX settings. */
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
  /** Read the policy log and its decisions. */
  'policy_log.read': ['owner', 'admin', 'compliance'],
  /** Invite people and change their roles (asks for a TOTP code again). */
  'members.manage': ['owner', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export const can = (role: Role, permission: Permission): boolean => (PERMISSIONS[permission] as readonly Role[]).includes(role);

/** Roles that must have enrolled in MFA before they may change anything. */
export const MFA_BEFORE_CHANGES: readonly Role[] = ['owner', 'admin'];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);
