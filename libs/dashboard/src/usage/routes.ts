// /usage: the customer's sends today and this month against the plan's limits (as the policy
// engine counts them: quota_usage, in the windows of the policy's own quotaWindows, against the
// effectivePlan of the folded state, an override granted after review included), how fast it
// may send (velocity limits, each instance's token bucket now), each instance's number guard (its
// age, warm-up allowance of first contacts today and what is left, a restriction in words, also as
// a notice at the top), its opted-out recipients, each instance's review pause in words, and two
// charts drawn on the server (sends per day by outcome, opt-outs per week) with their numbers as
// tables. Every member sees it (dashboard.view). Owners and admins may ask for higher limits
// (limits.request): the request is stored (@gw/accounts' limit requests, one pending at a time)
// and audited; an operator grants it with `gatewayctl limits grant`, which appends the
// LimitsOverridden fact. Everything is read within the signed-in member's customer.
import { AccountError, LIMIT_REQUEST_TEXT_MAX, listInstances, listLimitRequests, requestLimits, type LimitRequest } from '@gw/accounts';
import { effectivePlan, quotaWindows } from '@gw/policy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordChange } from '../appends.ts';
import { count, utcMinute } from '../format.ts';
import { form, text } from '../forms.ts';
import type { DashboardDeps } from '../deps.ts';
import { can } from '../roles/permissions.ts';
import { member, requirePermission } from '../sessions/guards.ts';
import { decisionsPerDay, instanceGuards, optOutsPerWeek, policyStateOf, quotaUsed, suppressionCounts } from './data.ts';
import { guardViews, restrictionNotices } from './guard-view.ts';
import { formValues, parseLimitRequest, type LimitRequestValues } from './limit-request-form.ts';
import { lastDays, lastWeeks, optOutsChart, pauseViews, planFacts, quotaView, sendsChart, velocityView } from './view.ts';

const PATH = '/usage';
/** Days of the sends chart and weeks of the opt-outs chart. */
export const CHART_DAYS = 30;
export const CHART_WEEKS = 12;

/** Notices after a redirect, by key: only these texts are ever shown, whatever the query says. */
const NOTICES: Record<string, string> = {
  requested: 'Your request is sent. Our team reviews it, usually within one working day; its status is below, and the new limits apply as soon as it is granted.',
};

const STATUS_WORDS: Record<LimitRequest['status'], { label: string; tone: string }> = {
  pending: { label: 'Waiting for review', tone: 'review' },
  granted: { label: 'Granted', tone: 'good' },
  declined: { label: 'Declined', tone: 'bad' },
};

interface FormState {
  error?: { field: string; message: string };
  values?: LimitRequestValues;
}

export const requestView = (r: LimitRequest) => ({
  id: r.id,
  daily: r.requested_daily === null ? null : count(r.requested_daily),
  monthly: r.requested_monthly === null ? null : count(r.requested_monthly),
  reason: r.reason,
  by: r.requested_by,
  at: utcMinute(r.requested_at),
  atIso: r.requested_at.toISOString(),
  status: r.status,
  statusLabel: STATUS_WORDS[r.status].label,
  tone: STATUS_WORDS[r.status].tone,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at ? utcMinute(r.decided_at) : null,
  note: r.decision_note,
});

export async function usageRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const config = deps.messaging.policy.config;

  /** The limits in force now: the plan's with the override on top (null without a plan the engine knows). */
  const limitsOf = async (customerId: string) => {
    const state = await policyStateOf(deps.pool, customerId);
    return { state, plan: effectivePlan(state, config) };
  };

  const page = async (request: FastifyRequest, formState: FormState = {}) => {
    const me = member(request);
    const now = Date.now();
    const { state, plan } = await limitsOf(me.customer_id);
    const offset = plan?.quotaWindowOffsetMinutes ?? config.quotaWindowOffsetMinutes;
    const windows = quotaWindows(now, offset);
    const days = lastDays(now, offset, CHART_DAYS);
    const weeks = lastWeeks(now, CHART_WEEKS);
    const facts = planFacts(state, plan, now, config.quotaWindowOffsetMinutes);
    const [used, suppressed, instances, requests, decisions, optOuts, guards] = await Promise.all([
      quotaUsed(deps.pool, me.customer_id, [windows.day, windows.month]),
      suppressionCounts(deps.pool, me.customer_id),
      listInstances(deps.pool, me.customer_id),
      listLimitRequests(deps.pool, { customerId: me.customer_id }),
      decisionsPerDay(deps.pool, me.customer_id, days.from, offset),
      optOutsPerWeek(deps.pool, me.customer_id, weeks.from),
      instanceGuards(deps.pool, me.customer_id),
    ]);
    const refs = instances.map((i) => ({ id: i.id, name: i.name }));
    const pending = requests.find((r) => r.status === 'pending') ?? null;
    const notice = NOTICES[(request.query as { notice?: string } | undefined)?.notice ?? ''] ?? null;
    return {
      title: 'Usage',
      notice,
      plan: facts,
      today: plan ? quotaView(used.get(windows.day)!, plan.dailyLimit, 'day', windows.day, windows.dayResetsAt) : null,
      month: plan ? quotaView(used.get(windows.month)!, plan.monthlyLimit, 'month', windows.month, windows.monthResetsAt) : null,
      velocity: plan ? velocityView(plan, state, refs, now) : null,
      suppressed,
      canSeeSuppressions: can(me.role, 'suppressions.read'),
      pauses: pauseViews(state, refs),
      guard: guardViews(guards, refs, now),
      restrictions: restrictionNotices(guards, refs, now),
      sends: sendsChart(decisions, days, facts.calendar),
      optOuts: optOutsChart(optOuts, weeks),
      requests: requests.map(requestView),
      pending: pending ? requestView(pending) : null,
      canRequest: can(me.role, 'limits.request'),
      current: plan ? { daily: count(plan.dailyLimit), monthly: count(plan.monthlyLimit) } : null,
      reasonMax: LIMIT_REQUEST_TEXT_MAX,
      error: formState.error ?? null,
      values: formState.values ?? { daily: '', monthly: '', reason: '' },
    };
  };

  app.get(PATH, { preHandler: requirePermission('dashboard.view') }, async (request, reply) => reply.page('usage/usage', await page(request)));

  app.post(
    `${PATH}/limit-request`,
    {
      preHandler: requirePermission('limits.request'),
      schema: form({ daily: text(40), monthly: text(40), reason: text(LIMIT_REQUEST_TEXT_MAX) }),
      attachValidation: true,
    },
    async (request, reply) => {
      const me = member(request);
      const values = formValues(request.body);
      const refuse = async (status: number, fieldName: string, message: string) =>
        reply.code(status).page('usage/usage', await page(request, { error: { field: fieldName, message }, values }));
      if (request.validationError) return refuse(400, 'reason', `Too long: the reason has at most ${count(LIMIT_REQUEST_TEXT_MAX)} characters, and a limit at most 10 digits.`);
      const { plan } = await limitsOf(me.customer_id);
      if (!plan) return refuse(400, 'daily', 'Your organisation has no plan yet, so there are no limits to raise. Contact us to choose a plan first.');
      const parsed = parseLimitRequest(request.body, { daily: plan.dailyLimit, monthly: plan.monthlyLimit });
      if (!parsed.ok) return refuse(400, parsed.field, parsed.message);
      let stored: LimitRequest;
      try {
        stored = await requestLimits(deps.pool, { customerId: me.customer_id, daily: parsed.daily, monthly: parsed.monthly, reason: parsed.reason, requestedBy: me.email });
      } catch (error) {
        if (error instanceof AccountError && error.code === 'conflict') return refuse(409, 'daily', error.message);
        if (error instanceof AccountError && error.code === 'invalid') return refuse(400, 'daily', error.message);
        throw error;
      }
      // The numbers only: the reason stays with the request (Postgres), not in the audit trail.
      await recordChange(deps.appends.audit, request, {
        action: 'limits.requested',
        subjectId: stored.id,
        details: { requested_daily: parsed.daily, requested_monthly: parsed.monthly, daily_limit: plan.dailyLimit, monthly_limit: plan.monthlyLimit },
      });
      return reply.redirect(`${PATH}?notice=requested#limit-requests`, 303);
    },
  );
}
