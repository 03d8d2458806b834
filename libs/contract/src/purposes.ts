/** Allowed message purposes (spec 2.1). Marketing and anything else is refused. */
export const MESSAGE_PURPOSES = ['transactional', 'operational', 'support', 'internal_team', 'authentication'] as const;
export type MessagePurpose = (typeof MESSAGE_PURPOSES)[number];

export function isMessagePurpose(value: unknown): value is MessagePurpose {
  return typeof value === 'string' && (MESSAGE_PURPOSES as readonly string[]).includes(value);
}
