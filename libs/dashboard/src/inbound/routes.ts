// /inbound-logs: the messages the customer's instances received (1:1 and group), newest first,
// with the opt-out keywords that acted and the free-text opt-out requests flagged for review;
// search, filters, one message by id (?id=, the suppressions page links each opt-out's cause
// here) and newer/older pages. Read within the signed-in member's customer only: another
// customer's message is not found, exactly as an unknown id.
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.ts';
import { can } from '../roles/permissions.ts';
import { member, requirePermission } from '../sessions/guards.ts';
import { utcText } from '../format.ts';
import { hrefWith, type RawQuery } from '../query-values.ts';
import { PAGE_SIZE } from '../pager.ts';
import { inboundMessage, inboundPage, instancesOf, type InboundRow } from './data.ts';
import { chatLabel, cursorText, flagLabel, inboundFilterValues, parseInboundQuery, type Cursor } from './query.ts';
import { CHECKS_OWN_QUERY } from '../forms.ts';

const PATH = '/inbound-logs';

/**
 * How a sender reads: its number, or for one the chat network showed only by a linked id
 * (`…@lid`, docs/decisions.md "Senders known only by a linked id") the number learned for it
 * since, or plainly that the number is unknown; the linked id always shown, to tell senders apart.
 */
export function senderLabel(sender: string | null, linkedPhone: string | null): string | null {
  if (!sender || !sender.endsWith('@lid')) return sender;
  return `${linkedPhone ?? 'Unknown number'} · linked id ${sender}`;
}

export async function inboundRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get(PATH, { preHandler: requirePermission('inbound.read'), config: CHECKS_OWN_QUERY }, async (request, reply) => {
    const me = member(request);
    const canManage = can(me.role, 'suppressions.manage');
    const instances = await instancesOf(deps.pool, me.customer_id);
    const q = parseInboundQuery((request.query ?? {}) as RawQuery, new Set(instances.map((i) => i.id)));

    const view = (row: InboundRow) => ({
      id: row.id,
      received: utcText(row.received_at),
      receivedIso: row.received_at.toISOString(),
      instance: row.instance_name ? `${row.instance_name}${row.instance_deleted ? ' (deleted)' : ''}` : row.instance_id,
      chat: chatLabel(row.chat, row.group_id),
      sender: row.sender,
      senderLabel: senderLabel(row.sender, row.linked_phone),
      text: row.message_text,
      flag: row.opt_action,
      flagLabel: flagLabel(row.opt_action),
      senderSuppressed: row.sender_suppressed,
      // A free-text request is not acted on: those who may suppress get the form, filled in.
      suppressHref: row.opt_action === 'flagged' && row.sender && !row.sender_suppressed && canManage ? hrefWith('/suppressed-recipients', { add: row.sender }, '#add') : null,
      optOutsHref: row.sender && (row.opt_action === 'opt_out' || row.sender_suppressed) ? hrefWith('/suppressed-recipients', { phone: row.sender.replace(/\D/g, '') }, '#current') : null,
    });

    const filters = inboundFilterValues(q);
    const pageLink = (key: 'before' | 'after', cursor: Cursor | null) => (cursor ? hrefWith(PATH, { ...filters, [key]: cursorText(cursor) }) : null);
    const common = {
      title: 'Inbound messages',
      retention: deps.inboundRetentionDays,
      instances,
      filters: { ...filters, chat: q.chat, flag: q.flag },
      filtered: Object.values(filters).some((v) => v !== ''),
      problems: q.problems,
    };

    if (q.id !== '') {
      // One message: the customer's own, or nothing (404, as for an id that names nothing).
      const found = await inboundMessage(deps.pool, me.customer_id, q.id);
      return reply.code(found ? 200 : 404).page('inbound/inbound-logs', { ...common, single: true, rows: found ? [view(found)] : [], newer: null, older: null, newest: null });
    }
    const page = await inboundPage(deps.pool, me.customer_id, q, PAGE_SIZE);
    return reply.page('inbound/inbound-logs', {
      ...common,
      single: false,
      rows: page.rows.map(view),
      newer: pageLink('after', page.newer),
      older: pageLink('before', page.older),
      // Paged away from the newest: a way back to them.
      newest: q.before || q.after ? hrefWith(PATH, filters) : null,
    });
  });
}
