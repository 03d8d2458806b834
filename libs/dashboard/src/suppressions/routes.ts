// /suppressed-recipients: the customer's opt-outs and manual suppressions, each opt-out with the
// inbound message that caused it; their history (opt-outs, opt-backs, manual changes); filters,
// pages and a CSV export; and the forms that add or lift a manual suppression. Everything is read
// within the signed-in member's customer. The forms append policy facts (RecipientSuppressed /
// RecipientUnsuppressed, source manual, by the member's email), as `gatewayctl suppress` does;
// the policy consumer folds them, so the list follows a few seconds later.
import { Readable } from 'node:stream';
import { normalizePhone, textProblem } from '@gw/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { form, text } from '../forms.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { csvExport, csvFileName } from './csv.ts';
import { countCurrent, countHistory, currentSuppressions, suppressionHistory, suppressionsOf, type CurrentRow, type HistoryRow } from './data.ts';
import {
  byText,
  historyLabel,
  hrefWith,
  isLinkedIdRecipient,
  linkedIdText,
  orList,
  parseSuppressionQuery,
  reasonText,
  recipientText,
  sourceLabel,
  suppressionFilterValues,
  type RawQuery,
  type SuppressionQuery,
} from './query.ts';
import { numberedPager, pageRows } from '../pager.ts';
import { utcText } from '../format.ts';
import type { FormName } from './pages.ts';

/** The longest reason a member may give. */
export const REASON_MAX = 200;
/** How much of a cause's message text the list shows (the inbound log shows all of it). */
export const CAUSE_CHARS = 300;

const PATH = '/suppressed-recipients';

/** Notices after a redirect, by key: only these texts are ever shown, whatever the query says. */
const NOTICES: Record<string, string> = {
  added: 'Added. It applies to sends from now on; the list updates within a few seconds.',
  lifted: 'Lifted. Messages to this number are allowed again from now on (unless the recipient has opted out); the list updates within a few seconds.',
};

interface FormState {
  error?: { where: FormName; message: string };
  values?: { where: FormName; phone: string; reason: string };
}

const clip = (value: string, max: number) => (value.length > max ? `${value.slice(0, max)}…` : value);

export async function suppressionRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const retention = deps.inboundRetentionDays;
  // The keywords as the instance-events service matches them, in words ("START, UNSTOP or YES").
  const optIn = orList(deps.messaging.optInKeywords) || 'an opt-in keyword';
  const optOut = orList(deps.messaging.optOutKeywords) || 'an opt-out keyword';
  const firstOptOut = deps.messaging.optOutKeywords[0] ?? 'STOP';

  const currentView = (row: CurrentRow) => ({
    recipient: row.recipient,
    recipientText: recipientText(row.recipient, row.linked_number),
    /** A number whose opt-out arrived under a linked id (docs/policy.md, "Linked ids"). */
    linkedFrom: row.cause_linked_from && isLinkedIdRecipient(row.cause_linked_from) ? linkedIdText(row.cause_linked_from) : null,
    source: row.source,
    sourceLabel: sourceLabel(row.source),
    reason: reasonText(row.source, row.reason),
    by: byText(row.created_by),
    since: utcText(row.created_at),
    sinceIso: row.created_at.toISOString(),
    cause:
      row.source !== 'opt_out'
        ? null
        : {
            // recorded: the history names the inbound message; kept: it is still in the inbound log.
            recorded: row.cause_inbound_id !== null,
            kept: row.cause_text !== null,
            text: row.cause_text === null ? null : clip(row.cause_text, CAUSE_CHARS),
            receivedAt: utcText(row.cause_received_at),
            href: row.cause_inbound_id ? hrefWith('/inbound-logs', { id: row.cause_inbound_id }) : null,
            instance: row.instance_name ? `${row.instance_name}${row.instance_deleted ? ' (deleted)' : ''}` : row.cause_instance_id,
          },
    liftHref: row.source === 'manual' ? hrefWith(PATH, { lift: row.recipient }, '#lift') : null,
  });

  const historyView = (row: HistoryRow) => ({
    id: row.id,
    at: utcText(row.at),
    atIso: row.at.toISOString(),
    recipient: recipientText(row.recipient),
    what: historyLabel(row.action, row.source, row.reason),
    // The engine carried this over from the same person's linked id (or number).
    linkedFrom: row.linked_from ? recipientText(row.linked_from) : null,
    tone: row.action === 'suppressed' ? 'bad' : 'good',
    // A keyword reply's reason is the label already; a person's reason is shown as written.
    reason: row.source === 'opt_out' ? '' : row.reason,
    by: byText(row.created_by),
    instance: row.instance_name ? `${row.instance_name}${row.instance_deleted ? ' (deleted)' : ''}` : row.instance_id,
    message: row.inbound_message_id ? { kept: row.message_kept, href: hrefWith('/inbound-logs', { id: row.inbound_message_id }) } : null,
  });

  const page = async (request: FastifyRequest, q: SuppressionQuery, state: FormState = {}) => {
    const me = member(request);
    const [current, currentTotal, history, historyTotal] = await Promise.all([
      currentSuppressions(deps.pool, me.customer_id, q, pageRows(q.page)),
      countCurrent(deps.pool, me.customer_id, q),
      suppressionHistory(deps.pool, me.customer_id, q, pageRows(q.historyPage)),
      countHistory(deps.pool, me.customer_id, q),
    ]);
    const filters = suppressionFilterValues(q);
    const keep = { ...filters, page: q.page > 1 ? q.page : '', hpage: q.historyPage > 1 ? q.historyPage : '' };
    const pager = (key: 'page' | 'hpage', at: number, total: number, hash: string) => numberedPager(at, total, (page) => hrefWith(PATH, { ...keep, [key]: page }, hash));
    const done = (request.query as RawQuery | undefined)?.done;
    const filtered = filters.source !== '' || filters.phone !== '' || filters.from !== '' || filters.to !== '';
    const values = (where: FormName) => (state.values?.where === where ? state.values : { phone: where === 'add' ? q.add : q.lift, reason: '' });
    return {
      title: 'Opt-outs and suppressed recipients',
      current: current.map(currentView),
      history: history.map(historyView),
      currentPager: pager('page', q.page, currentTotal, '#current'),
      historyPager: pager('hpage', q.historyPage, historyTotal, '#history'),
      filters: { ...filters, source: q.source },
      filtered,
      problems: q.problems,
      csvHref: hrefWith(`${PATH}.csv`, filters),
      notice: typeof done === 'string' ? (NOTICES[done] ?? null) : null,
      canManage: can(me.role, 'suppressions.manage'),
      retention,
      optIn,
      optOut,
      firstOptOut,
      reasonMax: REASON_MAX,
      error: state.error ?? null,
      add: values('add'),
      lift: values('lift'),
    };
  };

  app.get(PATH, { preHandler: requirePermission('suppressions.read') }, async (request, reply) => {
    const q = parseSuppressionQuery((request.query ?? {}) as RawQuery);
    return reply.page('suppressions/suppressed-recipients', await page(request, q));
  });

  app.get(`${PATH}.csv`, { preHandler: requirePermission('suppressions.read') }, async (request, reply) => {
    const q = parseSuppressionQuery((request.query ?? {}) as RawQuery);
    // A file holds exactly what was asked for: a filter not understood stops the export.
    if (q.problems.length > 0) throw new PageError(400, 'Export not started', `${q.problems.join(' ')} Correct the filters and export again.`, { href: PATH, label: 'Back to the opt-outs' });
    const chunks = await csvExport(deps.pool, member(request).customer_id, q);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${csvFileName(new Date())}"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(chunks));
  });

  const formSchema = form({ phone: text(64), reason: text(REASON_MAX * 4) });

  /** Checks the phone and reason of a form; returns the E.164 number and the reason, or the words of what is wrong. */
  const checkForm = (body: unknown): { phone: string; reason: string; recipient: string | null; problem: string | null } => {
    const fields = (body ?? {}) as { phone?: unknown; reason?: unknown };
    const phone = typeof fields.phone === 'string' ? fields.phone.trim() : '';
    const reason = typeof fields.reason === 'string' ? fields.reason.trim() : '';
    if (phone === '') return { phone, reason, recipient: null, problem: 'Enter the phone number, in international format with its country code, e.g. +14155550123.' };
    const recipient = normalizePhone(phone);
    if (!recipient) return { phone, reason, recipient: null, problem: `“${phone.slice(0, 64)}” is not a phone number in international format. Write it with its country code, e.g. +14155550123.` };
    if (reason === '') return { phone, reason, recipient, problem: 'Write a short reason, e.g. “asked us by phone not to message them”. It is kept in the history.' };
    const problem = textProblem(reason, REASON_MAX);
    if (problem) return { phone, reason, recipient, problem: `The reason ${problem}.` };
    return { phone, reason, recipient, problem: null };
  };

  const formError = async (request: FastifyRequest, where: FormName, phone: string, reason: string, message: string) =>
    page(request, parseSuppressionQuery({}), { error: { where, message }, values: { where, phone: phone.slice(0, 64), reason: reason.slice(0, REASON_MAX * 2) } });

  app.post(PATH, { preHandler: requirePermission('suppressions.manage'), schema: formSchema, attachValidation: true }, async (request, reply) => {
    const checked = checkForm(request.body);
    const refuse = async (message: string) => reply.code(400).page('suppressions/suppressed-recipients', await formError(request, 'add', checked.phone, checked.reason, message));
    if (request.validationError) return refuse(`The phone number or the reason is too long (a reason has at most ${REASON_MAX} characters).`);
    if (checked.problem || !checked.recipient) return refuse(checked.problem ?? 'Enter the phone number.');
    const me = member(request);
    const held = await suppressionsOf(deps.pool, me.customer_id, checked.recipient);
    const manual = held.find((h) => h.source === 'manual');
    if (manual) return refuse(`${checked.recipient} is already suppressed manually (since ${utcText(manual.created_at)}). To change the reason, lift it and add it again.`);
    await deps.appends.facts.append({ type: 'RecipientSuppressed', customerId: me.customer_id, at: Date.now(), recipient: checked.recipient, source: 'manual', reason: checked.reason, by: me.email });
    return reply.redirect(`${PATH}?done=added#current`, 303);
  });

  app.post(`${PATH}/remove`, { preHandler: requirePermission('suppressions.manage'), schema: formSchema, attachValidation: true }, async (request, reply) => {
    const checked = checkForm(request.body);
    const refuse = async (message: string) => reply.code(400).page('suppressions/suppressed-recipients', await formError(request, 'lift', checked.phone, checked.reason, message));
    if (request.validationError) return refuse(`The phone number or the reason is too long (a reason has at most ${REASON_MAX} characters).`);
    // The number first: whether it can be lifted matters more than the reason.
    if (!checked.recipient) return refuse(checked.problem ?? 'Enter the phone number.');
    const me = member(request);
    const held = await suppressionsOf(deps.pool, me.customer_id, checked.recipient);
    if (!held.some((h) => h.source === 'manual')) {
      if (held.some((h) => h.source === 'opt_out')) {
        return refuse(
          `${checked.recipient} opted out themselves, so only they can undo it: an opt-out stays until the recipient replies ${optIn}. It cannot be lifted here.`,
        );
      }
      return refuse(`${checked.recipient} has no manual suppression to lift. If you added it a moment ago, wait a few seconds and reload the page.`);
    }
    if (checked.problem) return refuse(checked.problem);
    await deps.appends.facts.append({ type: 'RecipientUnsuppressed', customerId: me.customer_id, at: Date.now(), recipient: checked.recipient, source: 'manual', by: me.email, reason: checked.reason });
    return reply.redirect(`${PATH}?done=lifted#current`, 303);
  });
}
