// /policy-log: the customer's policy log (every send the gateway decided for it, accepted or
// refused, with the code), filtered, newest first, 50 a page, each entry linking to its message's
// timeline; the export of the filtered entries as CSV or NDJSON, streamed from one snapshot; and
// "verify my log", a JSON report of the chain check and the replay for the customer's own entries
// (started by a POST; its GET is a status page).
// The export and the verification are @gw/compliance's, the ones `gatewayctl policy-log export |
// verify` run. Everything is read within the signed-in member's customer; policy_log.read.
import { CHECKS_EXPLAINED, verifyCustomerLog } from '@gw/compliance';
import { MESSAGE_PURPOSES } from '@gw/contract';
import { describeRules } from '@gw/policy';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { purposeLabel } from '../messaging-rules.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { countEntries, instancesOf, listEntries, type ListRow } from './data.ts';
import { allowSilence, sendExport, TOTAL_HEADER } from './download.ts';
import { utcText } from '../format.ts';
import { numberedPager, pageRows } from '../pager.ts';
import { downloadName, exportFormat, filterValues, hrefWith, parsePolicyLogQuery, type RawQuery } from './query.ts';
import { VerifyGate, type VerifyOutcome } from './verify-gate.ts';
import { form } from '../forms.ts';

const PATH = '/policy-log';
const BACK = { href: PATH, label: 'Back to the policy log' };
const VERIFY_PAGE = { href: `${PATH}/verify-report`, label: 'Verify my log' };
/** How long a verification may compute before its answer (the socket's idle timeout meanwhile). */
const VERIFY_SILENCE_MS = 30 * 60_000;

/** What a failure was, for the log: its kind only (a message may hold a number or a query). */
const kindOf = (error: unknown) => ({ type: (error as Error | undefined)?.name ?? typeof error, code: (error as { code?: unknown } | undefined)?.code });

export async function policyLogRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const guard = requirePermission('policy_log.read');
  const gate = new VerifyGate();
  // The codes a rule refuses with, as the responsible-messaging page lists them: the code filter's choices.
  const rules = describeRules(deps.messaging.policy.rules);
  const byCode = new Map<string, string[]>();
  for (const rule of rules) byCode.set(rule.code, [...(byCode.get(rule.code) ?? []), rule.name.replace(/_/g, ' ')]);
  const codes = [...byCode].map(([code, names]) => ({ code, rules: names.join(', ') }));

  const rowView = (keep: Record<string, string>) => (row: ListRow) => ({
    logId: row.log_id,
    messageId: row.message_id,
    href: `/messages/${encodeURIComponent(row.message_id)}`,
    decided: { iso: row.decided_at.toISOString(), shown: utcText(row.decided_at) },
    recipient: row.recipient,
    purpose: purposeLabel(row.message_purpose),
    instance: row.instance_name ? `${row.instance_name}${row.instance_deleted ? ' (deleted)' : ''}` : row.instance_id,
    accepted: row.decision === 'accepted',
    code: row.error_code,
    // The entries refused with this code, the other filters kept.
    codeHref: row.error_code ? hrefWith(PATH, { ...keep, code: row.error_code, decision: '' }, '#entries') : null,
    why: row.error_message,
  });

  app.get(PATH, { preHandler: guard }, async (request, reply) => {
    const me = member(request);
    const instances = await instancesOf(deps.pool, me.customer_id);
    const q = parsePolicyLogQuery((request.query ?? {}) as RawQuery, instances);
    const [rows, total] = await Promise.all([
      listEntries(deps.pool, me.customer_id, q.filter, pageRows(q.page)),
      countEntries(deps.pool, me.customer_id, q.filter),
    ]);
    const keep = filterValues(q.form);
    return reply.page('policy-log/policy-log', {
      title: 'Policy log',
      form: q.form,
      problems: q.problems,
      filtered: q.filtered,
      decisions: [
        { value: 'all', label: 'All' },
        { value: 'accepted', label: 'Accepted' },
        { value: 'refused', label: 'Refused' },
      ],
      codes: codes.some((c) => c.code === q.form.code) || q.form.code === '' ? codes : [...codes, { code: q.form.code, rules: '' }],
      purposes: [...MESSAGE_PURPOSES, ...(q.form.purpose && !(MESSAGE_PURPOSES as readonly string[]).includes(q.form.purpose) ? [q.form.purpose] : [])].map((p) => ({ value: p, label: purposeLabel(p) })),
      instances,
      rows: rows.map(rowView(keep)),
      pager: numberedPager(q.page, total, (page) => hrefWith(PATH, { ...keep, page }, '#entries')),
      exports: [
        { format: 'csv', label: 'Download CSV', hint: 'for a spreadsheet', href: hrefWith(`${PATH}/export`, { format: 'csv', ...keep }) },
        { format: 'ndjson', label: 'Download NDJSON', hint: 'one JSON entry a line, for a program', href: hrefWith(`${PATH}/export`, { format: 'ndjson', ...keep }) },
      ],
      // Problems in the filters stop an export: its links are not offered until they are corrected.
      exportable: q.problems.length === 0,
      totalHeader: TOTAL_HEADER,
      verifyAction: `${PATH}/verify-report`,
      checks: CHECKS_EXPLAINED,
    });
  });

  app.get(`${PATH}/export`, { preHandler: guard }, async (request, reply) => {
    const me = member(request);
    const raw = (request.query ?? {}) as RawQuery;
    const format = exportFormat(raw);
    if (!format) throw new PageError(400, 'Export not started', 'Choose the file’s format: CSV (for a spreadsheet) or NDJSON (one JSON entry a line, for a program).', BACK);
    const q = parsePolicyLogQuery(raw, await instancesOf(deps.pool, me.customer_id));
    // A file holds exactly what was asked for: a filter not understood stops the export.
    if (q.problems.length > 0) throw new PageError(400, 'Export not started', `${q.problems.join(' ')} Correct the filters and export again.`, BACK);
    return sendExport(request, reply, {
      pool: deps.compliance.pool,
      filter: { ...q.filter, customerId: me.customer_id },
      format,
      onFailure: (error) => app.log.error({ err: kindOf(error), route: `${PATH}/export` }, 'policy log export failed'),
    });
  });

  // Starting a verification is a POST (with the page's CSRF token): it reads the topics whole, so a
  // plain navigation, a prefetch or a link elsewhere must not start one. The answer is the report
  // itself (a JSON attachment); the page's script saves it and shows what it says.
  app.post(`${PATH}/verify-report`, { preHandler: guard, schema: form({}) }, async (request, reply) => {
    const me = member(request);
    const entered = gate.enter(me.customer_id);
    if (entered === 'running') {
      throw new PageError(429, 'A verification is already running', 'A verification of your log is already running. Its report downloads as soon as it is done; start another one after that.', VERIFY_PAGE);
    }
    if (entered === 'busy') throw new PageError(429, 'The gateway is busy', 'Other verifications are running on the gateway right now. Try again in a few minutes.', VERIFY_PAGE);
    let outcome: VerifyOutcome | undefined;
    try {
      allowSilence(request, reply, VERIFY_SILENCE_MS);
      const report = await verifyCustomerLog(deps.compliance, me.customer_id, { replayWorker: false });
      outcome = { ok: report.ok, at: new Date(report.checked_at), summary: report.summary, entries: report.counts.entries, divergences: report.counts.divergences };
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${downloadName('policy-log-verification', new Date(report.checked_at), 'json')}"`)
        .header('cache-control', 'no-store')
        .send(`${JSON.stringify(report, null, 2)}\n`);
    } catch (error) {
      app.log.error({ err: kindOf(error), route: `${PATH}/verify-report` }, 'policy log verification failed');
      outcome = { ok: null, at: new Date(), summary: 'The gateway could not finish checking your log (this says nothing about your log).', entries: null, divergences: null };
      throw new PageError(503, 'Verification not finished', 'The gateway could not finish checking your log just now (this says nothing about your log). Try again in a few minutes.', VERIFY_PAGE);
    } finally {
      gate.leave(me.customer_id, outcome);
    }
  });

  // The status page: whether a verification of the customer's log is running, what the last one
  // found, and the button that starts one. Reading it starts nothing.
  app.get(`${PATH}/verify-report`, { preHandler: guard }, async (request, reply) => {
    const status = gate.status(member(request).customer_id);
    const shown = (at: Date) => ({ iso: at.toISOString(), shown: utcText(at) });
    return reply.header('cache-control', 'no-store').page('policy-log/policy-log-verify', {
      title: 'Verify my log',
      verifyAction: `${PATH}/verify-report`,
      checks: CHECKS_EXPLAINED,
      running: status.runningSince ? shown(status.runningSince) : null,
      last: status.last ? { ...status.last, at: shown(status.last.at) } : null,
    });
  });
}
