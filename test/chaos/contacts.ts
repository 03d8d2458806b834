// The people the chaos load writes to. A guarded gateway does not carry a blast to hundreds of
// new contacts from a freshly paired number (docs/policy.md "The number guard": 20 first contacts
// an hour on day 0); it carries replies to people who wrote in. So before the load each person
// writes to the instance through the simulator (messages.upsert, as Evolution posts it), and the
// load starts once the policy's folded state knows every one of them.
import type { Pool } from '@gw/db';
import { isFirstContact } from '@gw/policy';
import { readPolicyState } from '@gw/policy-log';
import { setLimits } from '../../services/gatewayctl/src/policy/commands.ts';
import { OPEN_LIMITS, withOperator } from '../support/accounts.ts';
import type { Stack } from '../support/stack.ts';

/**
 * People per instance, each instance its own. Message n goes to account n mod 3 and, within it,
 * round the account's people in order, so one person hears from the instance every
 * RECIPIENTS_PER_ACCOUNT of its messages. The velocity rule wants 6 s between two sends to one
 * person (recipientMinIntervalMs, kept for these accounts: `chaosLimits`). An instance sends one
 * message at a time, each at least ~55 ms in the e2e stack (typing 45–50 ms for these ~56-char
 * texts, then a 10–15 ms gap: test/support/stack.ts), and a client takes its next message only
 * once its last one has a final answer, so between two sends to one person at least
 * 150 − clients of the instance's messages went out: ≥ (150 − 12) × 55 ms ≈ 7.6 s with `make
 * chaos`'s 12 clients (8.1 s with the e2e's 8), over the 6 s. As run (the e2e, 8 clients) the
 * load is ~10 messages a second at its fastest (41 in the ~4 s before the first fault) over its 3
 * instances, ~2 a second through the faults: one person hears again after ≥ 45 s, 7× the gap.
 */
export const RECIPIENTS_PER_ACCOUNT = 150;
/** How many people write in at once (the simulator posts each to the API's manager-webhook ingest). */
const WRITING_AT_ONCE = 10;

/** The people of the account at `index` (distinct across accounts): +1415556 and four digits. */
export function recipientsOf(index: number): string[] {
  return Array.from({ length: RECIPIENTS_PER_ACCOUNT }, (_, j) => `+1415556${String(index * RECIPIENTS_PER_ACCOUNT + j).padStart(4, '0')}`);
}

const CHAOS_LIMITS_REASON = 'chaos suite: limits raised, the plan\'s per-recipient interval kept';

/**
 * Every limit opened (the load is far over a plan's quota and token bucket) but the plan's
 * per-recipient interval, so the load keeps the pace a real conversation allows (OPEN_LIMITS
 * would set it to 0).
 */
export async function chaosLimits(stack: Stack, customerId: string): Promise<void> {
  const { recipientIntervalMs: _zero, ...limits } = OPEN_LIMITS;
  await withOperator(stack, ({ pool, facts }) => setLimits(pool, facts, { ...limits, reason: CHAOS_LIMITS_REASON, customerId }));
}

export interface WritingAccount {
  customer_id: string;
  instance_id: string;
  /** The instance's name on the manager (the simulator). */
  manager: string;
  recipients: readonly string[];
}

/** None of the account's people is a first contact, and the chaos limits are in force, in the policy's folded state. */
async function knowsEveryone(db: Pool, account: WritingAccount): Promise<boolean> {
  const state = await readPolicyState(db, account.customer_id);
  if (!state || state.override?.reason !== CHAOS_LIMITS_REASON) return false;
  return account.recipients.every((phone) => !isFirstContact(state, account.instance_id, phone));
}

/**
 * Each account's people write to its instance; resolves once the policy has folded every
 * ContactLearned (the decider's own state, `policy_state`, says none of them is a first contact).
 */
export async function writeIn(stack: Stack, db: Pool, accounts: WritingAccount[], timeoutMs = 60_000): Promise<void> {
  const writes = accounts.flatMap((account) => account.recipients.map((phone) => ({ account, phone })));
  for (let i = 0; i < writes.length; i += WRITING_AT_ONCE) {
    await Promise.all(writes.slice(i, i + WRITING_AT_ONCE).map(async ({ account, phone }) => {
      const path = `/sim/instances/${encodeURIComponent(account.manager)}/inbound`;
      const result = await stack.simulator.call('POST', path, { body: { from: phone.slice(1), text: 'Hello, can you confirm my appointment?' } });
      if (result.status >= 300) throw new Error(`the simulator refused an inbound message: ${result.status}`);
    }));
  }
  const deadline = Date.now() + timeoutMs;
  for (const account of accounts) {
    while (!(await knowsEveryone(db, account))) {
      if (Date.now() > deadline) throw new Error(`the policy did not learn the people who wrote to ${account.instance_id} within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
