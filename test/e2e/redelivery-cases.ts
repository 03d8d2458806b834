import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { readPolicyState } from '@gw/policy-log';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { send, type HttpResult } from '../support/http.ts';
import type { ServiceName } from '../support/stack.ts';
import { readTopic } from '../support/topic-reader.ts';
import { until, useStack } from '../support/suite.ts';

export type ExactlyOnceMode = 'idempotent' | 'transactions';

/**
 * The kill-and-restart cases, run once per KAFKA_EXACTLY_ONCE mode (one test file each). With
 * transactions a replayed batch leaves no second copy on the topics; in idempotent mode it may
 * leave identical copies (same event id), never a second decision or a second outcome.
 */
export function redeliveryCases(mode: ExactlyOnceMode): void {
  const suite = useStack({ env: { KAFKA_EXACTLY_ONCE: mode } });

  /** How many times the simulator received each text. */
  async function ledgerTexts(): Promise<Map<string, number>> {
    const messages: Array<{ text: string }> = (await suite.stack.simulator.call('GET', '/sim/ledger')).body.messages;
    const counts = new Map<string, number>();
    for (const m of messages) counts.set(m.text, (counts.get(m.text) ?? 0) + 1);
    return counts;
  }

  /** The count a query names `n`. */
  function count(query: ReturnType<typeof sql.fragment>): Promise<number> {
    return suite.db.oneFirst(sql.type(z.object({ n: z.number() }))`${query}`);
  }

  /** Sends `total` distinct messages, `concurrency` at a time, returning every answer. */
  function sendStream(account: DemoAccount, label: string, total: number, concurrency: number): Promise<HttpResult[]> {
    let next = 0;
    const results: HttpResult[] = [];
    const worker = async () => {
      while (next < total) {
        const i = next++;
        results[i] = await send(suite.stack.apiUrl, account.api_key, {
          instance_id: account.instance_id,
          phone: `+1415555${String(1000 + i).padStart(4, '0')}`,
          message: `${label} message ${i}`,
          message_purpose: 'operational',
        });
      }
    };
    return Promise.all(Array.from({ length: concurrency }, worker)).then(() => results);
  }

  async function killAndRestartMidStream(service: ServiceName, label: string, progress: (account: DemoAccount) => Promise<number>) {
    const account = await demoAccount(suite.stack);
    const total = 120;
    const stream = sendStream(account, label, total, 12);
    await until(async () => (await progress(account)) >= 30, 60_000, `${service} to get going`);
    await suite.stack.kill(service, 'SIGKILL');
    // The kill must land mid-stream for the test to mean anything.
    const progressAtKill = await progress(account);
    expect(progressAtKill).toBeLessThan(total);
    await suite.stack.start(service);
    const results = await stream;
    // Let the pipeline drain: every accepted decision claimed by the delivery stage, then settled.
    await until(
      async () => (await count(sql.fragment`SELECT count(*) AS n FROM deliveries WHERE customer_id = ${account.customer_id}`)) >= total,
      60_000,
      'every message to reach the delivery stage',
    );
    await until(
      async () => (await count(sql.fragment`SELECT count(*) AS n FROM deliveries WHERE customer_id = ${account.customer_id} AND state = 'dispatching'`)) <= 12,
      30_000,
      'in-flight sends to settle',
    );
    return { account, total, results };
  }

  /** Each key's records on a topic: exactly one with transactions, identical copies otherwise. */
  function expectOnePerKey(records: Array<{ key: string; copy: string }>): number {
    const byKey = new Map<string, Set<string>>();
    const counts = new Map<string, number>();
    for (const { key, copy } of records) {
      byKey.set(key, (byKey.get(key) ?? new Set()).add(copy));
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, copies] of byKey) {
      expect(copies.size, `${key}: copies differ`).toBe(1);
      if (mode === 'transactions') expect(counts.get(key), key).toBe(1);
    }
    return byKey.size;
  }

  describe(`redelivery after a consumer is killed mid-stream (KAFKA_EXACTLY_ONCE=${mode})`, () => {
    it('the delivery consumer, killed with SIGKILL and restarted, never sends a message twice', async () => {
      const { account, total, results } = await killAndRestartMidStream('delivery', 'kill-delivery', (a) =>
        count(sql.fragment`SELECT count(*) AS n FROM deliveries WHERE customer_id = ${a.customer_id}`),
      );

      const ledger = await ledgerTexts();
      const mine = [...ledger.entries()].filter(([text]) => text.startsWith('kill-delivery message '));
      // Never twice.
      for (const [text, times] of mine) expect(times, text).toBe(1);

      const states = await suite.db.any(sql.type(z.object({ state: z.string(), n: z.number() }))`SELECT state, count(*) AS n FROM deliveries WHERE customer_id = ${account.customer_id} GROUP BY state`);
      const byState = Object.fromEntries(states.map((r) => [r.state, r.n]));
      console.info('delivery states after the kill and restart', byState);
      expect((byState.dispatched ?? 0) + (byState.unknown ?? 0) + (byState.dispatching ?? 0)).toBe(total);
      // Everything recorded as dispatched is in the ledger exactly once; only sends cut by the kill
      // can be of unknown outcome, and there are at most as many as were in flight.
      expect(byState.dispatched ?? 0).toBeGreaterThanOrEqual(total - 12);
      expect(mine.length).toBeGreaterThanOrEqual(byState.dispatched ?? 0);

      // One decision per command, and no answer says "failed" for a message that may have been sent.
      expect(await count(sql.fragment`SELECT count(*) AS n FROM policy_log WHERE customer_id = ${account.customer_id}`)).toBe(total);
      for (const result of results) {
        expect([200], JSON.stringify(result.body)).toContain(result.status);
        if (result.body.status === 'sent') expect(ledger.get(`kill-delivery message ${results.indexOf(result)}`)).toBe(1);
      }
      const outcomes = (await readTopic(suite.stack.env, 'deliveryEvents')).filter((e) => e.payload.customer_id === account.customer_id);
      // One outcome per message: a second copy (idempotent mode) is the same event, not a second send.
      expectOnePerKey(
        outcomes.flatMap((e) => (e.type === 'MessageDispatched' || e.type === 'DeliveryFailed' ? [{ key: e.payload.message_id, copy: `${e.type} ${e.payload.event_id}` }] : [])),
      );
    });

    it('the policy consumer, killed with SIGKILL and restarted, writes one decision per command', async () => {
      const { account, total, results } = await killAndRestartMidStream('policy', 'kill-policy', (a) =>
        count(sql.fragment`SELECT count(*) AS n FROM policy_log WHERE customer_id = ${a.customer_id}`),
      );
      expect(await count(sql.fragment`SELECT count(*) AS n FROM policy_log WHERE customer_id = ${account.customer_id}`)).toBe(total);
      expect(await count(sql.fragment`SELECT count(DISTINCT command_id) AS n FROM policy_log WHERE customer_id = ${account.customer_id}`)).toBe(total);
      // No double counting: the quota projection and the folded state count each accepted send once.
      expect(await count(sql.fragment`SELECT used AS n FROM quota_usage WHERE customer_id = ${account.customer_id} AND window_key LIKE '____-__-__'`)).toBe(total);
      const state = await readPolicyState(suite.db, account.customer_id);
      expect(state?.quota.day.used).toBe(total);

      const decisions = (await readTopic(suite.stack.env, 'policyDecisions')).filter((e) => e.type === 'SendDecided' && e.payload.customer_id === account.customer_id);
      const commands = expectOnePerKey(
        decisions.map((e) => ({ key: e.payload.correlation_id, copy: e.type === 'SendDecided' ? `${e.payload.event_id} ${e.payload.log_id} ${e.payload.entry_hash}` : '' })),
      );
      expect(commands).toBe(total);

      const ledger = await ledgerTexts();
      for (let i = 0; i < total; i++) expect(ledger.get(`kill-policy message ${i}`) ?? 0, `message ${i}`).toBe(1);
      // A request that outlived its deadline while the consumer was down says so, never "failed".
      for (const result of results) {
        if (result.status !== 200) expect(result.body).toMatchObject({ error: 'internal_error', details: { state: 'pending_decision' } });
      }
    });
  });
}
