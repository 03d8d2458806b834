// When a command is appended: the one re-append rule of the send path (POST /api/send-message, the
// PBX webhook and the dashboard's test sends all go by it).

/** How a request came by its command id: a new claim, or a retry of a recorded one. */
export type SendClaim = { kind: 'new' } | { kind: 'replay'; /** How long ago the first request claimed it (ms). */ ageMs: number };

/**
 * - `append`: a new command.
 * - `skip`: a retry whose first append may still be on its way (younger than `reappendAfterMs`).
 * - `append-if-undecided`: a retry whose first append looks lost: old enough. It is appended again
 *   only while still undecided (the policy stage would re-emit a decided command's decision, and the
 *   pipeline would run again for nothing); a re-append of an undecided one is safe, as the policy
 *   stage decides a command id once. Something that is never decided (a PBX event that sends
 *   nothing) is simply appended again.
 */
export type AppendRule = 'append' | 'skip' | 'append-if-undecided';

export function appendRule(claim: SendClaim, reappendAfterMs: number): AppendRule {
  if (claim.kind === 'new') return 'append';
  return claim.ageMs > reappendAfterMs ? 'append-if-undecided' : 'skip';
}
