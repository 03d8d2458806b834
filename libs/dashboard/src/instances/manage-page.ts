// What an instance's manage page shows (instance-manage.eta): its connection at load time
// (so the page reads right without JavaScript), the tabs, the forms the member's role allows, and
// the outcome of a test send when the page answers one, and the number guard's notice while the
// instance is restricted (the same words as /usage). The page and its template are this slice's:
// a POST of the webhook tab answers with it through webhookTabAnswer, handed to that slice.
import type { InstanceSummary } from '@gw/accounts';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import type { FastifyRequest } from 'fastify';
import { can } from '../roles/permissions.ts';
import { member } from '../sessions/guards.ts';
import { liveState, STATE_LABELS, stateTone } from './live-state.ts';
import { openOwn } from '../own-instance.ts';
import { PURPOSES, type FormRefusal, type TestSendForm, type TestSendOutcome } from './test-send.ts';
import { instanceGuards } from '../usage/data.ts';
import { restrictionNotices } from '../usage/guard-view.ts';
import { webhookTabData, type WebhookTabAnswer, type WebhookTabOptions } from '../webhooks/tab-data.ts';

/** Notices after a redirect, by key (only these texts are ever shown, whatever the query says). */
const NOTICES: Record<string, string> = {
  created: 'Instance created. Link a phone to it: scan the QR code below with the chat app on that phone (Settings, Linked devices).',
  pairing: 'Pairing started. Scan the QR code, or enter the pairing code on the phone.',
  disconnected: 'Disconnected. The phone is no longer linked; pair again to send from this instance.',
  webhook_failed: "Instance created, but its manager did not accept the gateway's event webhook, so connection events will not reach the gateway. Delete the instance and create it again, or contact support.",
};

export interface ManageExtras {
  error?: string;
  testSend?: { form: Partial<TestSendForm>; outcome: TestSendOutcome | null; refusal: FormRefusal | null };
  /** The page on its webhook tab answering one of the tab's POSTs: the form as sent, its error, or a secret shown once. */
  webhook?: WebhookTabOptions;
}

export async function managePage(pool: Pool, box: SecretBox, request: FastifyRequest, instance: InstanceSummary, extras: ManageExtras = {}) {
  const me = member(request);
  const query = (request.method === 'GET' ? request.query : {}) as { tab?: string; done?: string };
  const tab = extras.webhook || query.tab === 'webhook' ? 'webhook' : 'connection';
  const canManage = can(me.role, 'instances.manage');
  // QR and pairing codes link a phone to the instance: shown only to whom may pair it.
  const live = tab === 'connection' ? await liveState(await openOwn(pool, box, instance), { withCodes: canManage }) : null;
  return {
    title: instance.name,
    instance,
    tab,
    live,
    labels: STATE_LABELS,
    label: live ? (STATE_LABELS[live.connection_state] ?? live.connection_state) : null,
    tone: live ? stateTone(live.connection_state) : '',
    canManage,
    canTestSend: can(me.role, 'instances.test_send'),
    purposes: PURPOSES,
    notice: query.done ? (NOTICES[query.done] ?? null) : null,
    restrictions: restrictionNotices(await instanceGuards(pool, me.customer_id, instance.id), [instance], Date.now()),
    error: extras.error ?? null,
    testSend: extras.testSend ?? { form: {}, outcome: null, refusal: null },
    // The webhook tab's own data (webhooks/instance-webhook.eta), with its notices after a redirect.
    webhook: tab === 'webhook' ? await webhookTabData(pool, me.customer_id, instance.id, extras.webhook ?? { done: query.done }) : null,
  };
}

/** What the webhook slice answers its tab's POSTs with: this page on that tab (plugin.ts hands it over). */
export function webhookTabAnswer(pool: Pool, box: SecretBox): WebhookTabAnswer {
  return async (request, reply, status, instance, options) => reply.code(status).page('instances/instance-manage', await managePage(pool, box, request, instance, { webhook: options }));
}
