import { describe, expect, it } from 'vitest';
import { insertEntries, storedCopy } from '@gw/policy-log';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
// The delivery stage's own writer makes the deliveries rows, as it does in the pipeline.
import { claim, recordOutcomes } from '../../../services/delivery/src/dispatch/delivery-store.ts';
import { taskOf } from '../../../services/delivery/src/dispatch/outcomes.ts';
import { decision, delivered, failedDelivery } from '../../../test/support/api/fake-replies.ts';
import { commandDecided, loadProgress, loadProgressMany } from './progress-read.ts';

// The projections the reply router falls back on (a reply missed), read from a real database as
// the policy and delivery stages write them.
const db = useIsolatedDatabase();

const waitOn = (commandId: string) => ({ commandId, deadlineMs: 0, options: {} });
const dispatch = { instance_name: 'front', phone: '+14155552671', text: 'Your order has shipped.' };

describe('progress read', () => {
  it('reads every command\'s decision and delivery outcome in one statement; an undecided command is absent', async () => {
    const sent = decision('cmd_sent', { log_id: 1, dispatch });
    const failed = decision('cmd_failed', { log_id: 2, dispatch });
    const underway = decision('cmd_underway', { log_id: 3, dispatch });
    const refused = decision('cmd_refused', { log_id: 4, decision: 'rejected', error_code: 'policy_violation', error_message: 'No.' });
    await insertEntries(db.pool, [sent, failed, underway, refused]);
    await claim(db.pool, [sent, failed, underway].map((accepted) => taskOf(accepted, 'front')));
    const sentOutcome = delivered(waitOn('cmd_sent')).delivery!;
    const failedOutcome = failedDelivery(waitOn('cmd_failed')).delivery!;
    await recordOutcomes(db.pool, [
      { messageId: sent.message_id, attempt: 1, outcome: sentOutcome, detail: null },
      { messageId: failed.message_id, attempt: 1, outcome: failedOutcome, detail: null },
    ]);

    const progress = await loadProgressMany(db.pool, ['cmd_sent', 'cmd_failed', 'cmd_underway', 'cmd_refused', 'cmd_unknown']);
    expect(progress).toEqual(
      new Map([
        ['cmd_sent', { decision: storedCopy(sent), delivery: sentOutcome }],
        ['cmd_failed', { decision: storedCopy(failed), delivery: failedOutcome }],
        ['cmd_underway', { decision: storedCopy(underway), delivery: null }],
        ['cmd_refused', { decision: storedCopy(refused), delivery: null }],
      ]),
    );
    expect(await loadProgress(db.pool, 'cmd_sent')).toEqual({ decision: storedCopy(sent), delivery: sentOutcome });
    expect(await loadProgress(db.pool, 'cmd_unknown')).toEqual({ decision: null, delivery: null });
    expect(await loadProgressMany(db.pool, [])).toEqual(new Map());
  });

  it('a command is decided once its policy-log row exists', async () => {
    await insertEntries(db.pool, [decision('cmd_decided', { log_id: 10 })]);
    expect(await commandDecided(db.pool, 'cmd_decided')).toBe(true);
    expect(await commandDecided(db.pool, 'cmd_not_yet')).toBe(false);
  });
});
