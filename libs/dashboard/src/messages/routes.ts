// /messages: the customer's messages, searched by message id, log id, recipient's phone, time and
// decision, each with its delivery state now; and /messages/:messageId, one message's timeline:
// the policy's decision with every rule, the delivery (sent, delivered, read, or why not) and the
// webhook deliveries that told the customer, with every attempt. Everything is read within the
// signed-in member's customer: another customer's message answers 404 like an unknown one.
// The gateway keeps no message text (the policy log holds a digest), so none is shown.
import { textProblem } from '@gw/contract';
import { describeRules } from '@gw/policy';
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { can } from '../roles/permissions.ts';
import { member, PageError, requirePermission } from '../sessions/guards.ts';
import { PAGE_SIZE } from '../pager.ts';
import { DEFAULT_DAYS, MIN_PHONE_DIGITS, pageLink, parseSearch, type SearchForm } from './search.ts';
import { loadTimeline, searchMessages } from './store.ts';
import { timelineView } from './timeline.ts';
import type { MessagesPage } from './pages.ts';
import { resultView } from './words.ts';
import { utcText } from '../format.ts';
import { CHECKS_OWN_QUERY } from '../forms.ts';

const NO_SUCH_MESSAGE = {
  title: 'No such message',
  message: 'Your organisation has no message with this id. Search for it by its log id, the recipient or the time it was sent.',
};

export async function messageRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  // What each rule checks, as the responsible-messaging page and `gatewayctl policy-log rules` say it.
  const described = describeRules(deps.messaging.policy.rules);

  const searchPage = (form: SearchForm, extra: Partial<MessagesPage>): MessagesPage => ({
    title: 'Messages',
    form,
    decisions: [
      { value: 'all', label: 'All' },
      { value: 'accepted', label: 'Accepted' },
      { value: 'refused', label: 'Refused' },
    ],
    defaultDays: DEFAULT_DAYS,
    minDigits: MIN_PHONE_DIGITS,
    pageSize: PAGE_SIZE,
    errors: [],
    results: null,
    ...extra,
  });

  app.get('/messages', { preHandler: requirePermission('messages.read'), config: CHECKS_OWN_QUERY }, async (request, reply) => {
    const parsed = parseSearch((request.query ?? {}) as Record<string, unknown>, new Date());
    if (!parsed.ok) return reply.code(400).page('messages/messages', searchPage(parsed.form, { errors: parsed.errors }));
    const { search, form } = parsed;
    const { rows, more } = await searchMessages(deps.pool, member(request).customer_id, search);
    // An exact id that names one message: straight to its timeline.
    if (search.byId && search.page === 1 && rows.length === 1) return reply.redirect(`/messages/${encodeURIComponent(rows[0]!.message_id)}`, 303);
    return reply.page('messages/messages',
      searchPage(form, {
        results: {
          rows: rows.map(resultView),
          page: search.page,
          previous: search.page > 1 ? pageLink(form, search.page - 1) : null,
          next: more ? pageLink(form, search.page + 1) : null,
          range: {
            from: search.from ? utcText(search.from) : null,
            before: search.before ? utcText(search.before) : null,
            defaulted: search.defaultRange,
          },
          filtered: search.byId || search.phone !== null || search.decision !== 'all' || !search.defaultRange,
        },
      }),
    );
  });

  app.get<{ Params: { messageId: string } }>('/messages/:messageId', { preHandler: requirePermission('messages.read'), config: CHECKS_OWN_QUERY }, async (request, reply) => {
    const me = member(request);
    const messageId = request.params.messageId;
    // An id no message can have (too long, a NUL, an unpaired surrogate) is not looked up.
    const timeline = textProblem(messageId, 200) === null ? await loadTimeline(deps.pool, me.customer_id, messageId) : null;
    if (!timeline) throw new PageError(404, NO_SUCH_MESSAGE.title, NO_SUCH_MESSAGE.message, { href: '/messages', label: 'Search your messages' });
    return reply.page('messages/message-timeline', {
      title: `Message ${timeline.entry.message_id}`,
      ...timelineView(timeline, described),
      canResend: can(me.role, 'webhooks.manage'),
    });
  });
}
