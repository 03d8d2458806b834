// The send path's "inside conversations" workload (issue 27): before the load, every recipient
// writes to every instance, the way the gateway learns it in production: the simulator posts
// messages.upsert as Evolution does, the API's ingest appends it, the instance-events stage turns
// it into a ContactLearned fact on the customer's stream, and the policy folds it. The sends that
// follow are replies, not first contacts, so the number guard's caps do not apply to them.
import { createPool, sql, z } from '@gw/db';
import { Topics } from '@gw/events';
import type { DemoAccount } from '../../test/support/accounts.ts';
import { baseConfig } from '../../test/support/infra.ts';
import type { Stack } from '../../test/support/stack.ts';
import { backlogPoller } from './backlog.ts';

/** The inbound posts in flight at once (the simulator posts each to the API's ingest). */
const PARALLEL_POSTS = 16;

/** Recipient number `i` (E.164), the same people for every instance. */
export const conversationPhone = (i: number) => `+1415600${String(i).padStart(4, '0')}`;

async function managerInstances(stack: Stack, accounts: DemoAccount[]): Promise<Map<string, string>> {
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    const rows = await pool.any(sql.type(z.object({ id: z.string(), manager: z.string() }))`
      SELECT id, manager_instance AS manager FROM instances WHERE id = ANY(${sql.array(accounts.map((a) => a.instance_id), 'text')})`);
    return new Map(rows.map((r) => [r.id, r.manager]));
  } finally {
    await pool.end();
  }
}

/** Both groups have consumed all that is on their topics, twice in a row a second apart. */
async function caughtUp(topics: Topics, deadlineMs: number): Promise<void> {
  const watch = [
    { group: topics.group('instance-events'), topic: topics.name('instanceEvents'), label: 'instance-events' },
    { group: topics.group('policy'), topic: topics.name('customerEvents'), label: 'policy' },
  ];
  let quiet = 0;
  while (quiet < 2) {
    if (Date.now() > deadlineMs) throw new Error('the ingest and the policy did not catch up with the inbound messages in time');
    const poller = backlogPoller(baseConfig.kafkaBrokers, watch, 500);
    await poller.start();
    await new Promise((r) => setTimeout(r, 1000));
    const peak = await poller.stop();
    quiet = watch.every((w) => peak[w.label] === 0) ? quiet + 1 : 0;
  }
}

/**
 * Every one of `recipients` writes to every account's instance; resolves once each instance knows
 * them all (instance-events claimed each ContactLearned) and the policy has folded the facts.
 */
export async function seedConversations(stack: Stack, accounts: DemoAccount[], recipients: number, timeoutMs = 180_000): Promise<{ posted: number; seconds: number }> {
  const started = Date.now();
  const managers = await managerInstances(stack, accounts);
  const posts = accounts.flatMap((account) => Array.from({ length: recipients }, (_, i) => ({ manager: managers.get(account.instance_id)!, from: conversationPhone(i).slice(1) })));
  let next = 0;
  const worker = async () => {
    while (next < posts.length) {
      const { manager, from } = posts[next++]!;
      const answer = await stack.simulator.call('POST', `/sim/instances/${encodeURIComponent(manager)}/inbound`, { body: { from, text: 'Hello, can you send me my code?' } });
      if (answer.status >= 300) throw new Error(`the simulator refused an inbound message: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_POSTS }, worker));
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  const deadline = started + timeoutMs;
  try {
    for (;;) {
      const known = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM instance_known_contacts WHERE instance_id = ANY(${sql.array(accounts.map((a) => a.instance_id), 'text')})`);
      if (known >= posts.length) break;
      if (Date.now() > deadline) throw new Error(`the ingest learned ${known} of ${posts.length} contacts in time`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await pool.end();
  }
  await caughtUp(new Topics(stack.isolation.topicPrefix, Number(stack.env.TOPIC_PARTITIONS ?? baseConfig.topicPartitions)), deadline);
  return { posted: posts.length, seconds: Math.round((Date.now() - started) / 100) / 10 };
}

/**
 * How the accepted sends of these instances in the stack's policy log were judged by the guard's first-contact rule:
 * replies (first_contact false), first contacts, and entries without the rule (a tree before the guard).
 */
export async function firstContactSplit(stack: Stack, instanceIds: string[]): Promise<{ replies: number; firstContacts: number; withoutRule: number }> {
  const pool = await createPool(stack.isolation.databaseUrl, { maxConnections: 1 });
  try {
    return await pool.one(sql.type(z.object({ replies: z.number(), firstContacts: z.number(), withoutRule: z.number() }))`
      SELECT count(*) FILTER (WHERE fc = 'false')::int AS "replies",
             count(*) FILTER (WHERE fc = 'true')::int AS "firstContacts",
             count(*) FILTER (WHERE fc IS NULL)::int AS "withoutRule"
      FROM (
        SELECT (SELECT (r->>'detail')::jsonb->>'first_contact' FROM jsonb_array_elements(l.reasons) r WHERE r->>'rule' = 'first_contact_limit' LIMIT 1) AS fc
        FROM policy_log l WHERE l.decision = 'accepted' AND l.instance_id = ANY(${sql.array(instanceIds, 'text')})
      ) judged`);
  } finally {
    await pool.end();
  }
}
