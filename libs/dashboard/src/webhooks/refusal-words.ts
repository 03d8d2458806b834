// The webhook operations' refusals in a customer's words: what was refused, why, and what to do.
// The SSRF guard's refusals (libs/webhooks/src/ssrf.ts) are explained by their code and the kind
// of address blocked; a host name's resolved addresses are never shown (they would describe the
// gateway's own network), only the kind of address it resolves to.
import type { DestinationRules, WebhookError } from '@gw/accounts';
import { DEFAULT_ALLOWED_PORTS, type BlockCategory, type WebhookDestinationError } from '@gw/webhooks';

export interface Explained {
  message: string;
  /** The guard's own technical line, when it names only what the customer typed. */
  detail: string | null;
}

const PUBLIC_ONLY = 'The gateway posts only to public internet addresses, so that a webhook cannot be used to reach systems inside a private network. Use the public address of your receiver.';

/** What kind of address was blocked, as the end of "… is …". */
const KINDS: Partial<Record<BlockCategory, string>> = {
  private: 'a private network address (an office, home or cloud-internal network)',
  loopback: 'a loopback address, which would point the gateway at itself',
  link_local: 'a link-local address (used inside one network, and by cloud metadata services)',
  cgnat: "in a carrier's shared address space (carrier-grade NAT), not a public address",
  unique_local: 'a private IPv6 address (unique-local)',
  site_local: 'a private IPv6 address (site-local)',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  documentation: 'an address reserved for documentation examples',
  benchmarking: 'an address reserved for network benchmarking',
  this_network: 'not a real destination ("this network")',
  unspecified: 'not a real destination (the unspecified address)',
};
const kindOf = (category: BlockCategory | undefined) => (category && KINDS[category]) ?? 'an address reserved for special uses, not a public internet address';

const ports = DEFAULT_ALLOWED_PORTS.map((p) => (typeof p === 'number' ? String(p) : `${p[0]} to ${p[1]}`));

/** A refused destination URL, explained. */
export function explainDestination(error: WebhookDestinationError, rules: Pick<DestinationRules, 'httpsOnly'>): Explained {
  const technical = error.message;
  switch (error.code) {
    case 'invalid_url':
      if (/required/.test(technical)) return { message: 'Enter the address of your receiver, e.g. https://example.com/hooks/chat.', detail: null };
      if (/longer than/.test(technical)) return { message: `That address is too long: at most ${/(\d+)/.exec(technical)?.[1] ?? '2048'} characters.`, detail: null };
      return { message: 'That is not a complete web address. Write it in full, starting with https://, e.g. https://example.com/hooks/chat.', detail: null };
    case 'unsupported_scheme':
      return { message: `The gateway posts only to web addresses (${rules.httpsOnly ? 'https://' : 'https:// or http://'}), not to "${String(error.details.scheme ?? '')}:" addresses.`, detail: null };
    case 'https_required':
      return { message: 'This gateway posts only over https://, so that events (which can hold message text and phone numbers) are encrypted on the way. Use an https:// address.', detail: null };
    case 'credentials_in_url':
      return { message: 'Remove the user name and password from the address. To know that a request comes from the gateway, your receiver checks its signature with the signing secret instead.', detail: null };
    case 'port_not_allowed':
      return { message: `Port ${String(error.details.port)} is not allowed. Use ${ports.slice(0, -1).join(', ')} or ${ports.at(-1)}; 443 is the usual port for https.`, detail: null };
    case 'destination_blocked': {
      const blocked = (error.details.blocked ?? []) as Array<{ address: string; category: BlockCategory }>;
      const host = String(error.details.host ?? '');
      const literal = blocked.some((b) => b.address === host.replace(/^\[|\]$/g, ''));
      const kind = kindOf(blocked[0]?.category);
      if (literal) return { message: `${host} is ${kind}. ${PUBLIC_ONLY}`, detail: technical };
      return { message: `${host} leads to ${kind}. ${PUBLIC_ONLY}`, detail: null };
    }
    case 'dns_resolution_failed':
      return { message: `The host name ${String(error.details.host ?? '')} could not be found. Check its spelling, and that it is published in public DNS.`, detail: null };
  }
}

/** A refusal of the configure form, explained; null when it is not the form's to show. */
export function explainConfigure(error: WebhookError, rules: DestinationRules): Explained | null {
  if (error.refusal === 'destination_refused' && error.details.destination) return explainDestination(error.details.destination, rules);
  if (error.refusal === 'destination_changed') {
    return { message: "Someone changed this webhook's address while you were saving, so your change was not saved. Check the address shown here, then save again.", detail: null };
  }
  if (error.refusal === 'events_refused') {
    const unknown = error.details.subscription?.unknown ?? [];
    return unknown.length > 0
      ? { message: `These are not events of the gateway: ${unknown.join(', ')}. Choose from the list.`, detail: null }
      : { message: 'Choose at least one event, or save with the recommended events.', detail: null };
  }
  return null;
}

/** Why an endpoint was disabled, as the end of "Disabled: …". */
export function disabledWhy(reason: string | null | undefined): string {
  if (reason === 'gone') return 'your receiver answered 410 Gone, which tells the gateway to stop sending';
  if (reason === 'failing_too_long') return 'every delivery failed for days in a row, so the gateway stopped trying';
  return reason ? `the gateway stopped sending (${reason})` : 'the gateway stopped sending';
}

/** A refusal of resend, recover, pause or rotate that the tab shows as a form error. */
export function explainAction(error: WebhookError): string | null {
  switch (error.refusal) {
    case 'no_webhook':
      return 'Set up the webhook first: give the address of your receiver and choose its events.';
    case 'disabled':
      return `This webhook is disabled: ${disabledWhy(error.details.disabledReason)}. ${error.details.doing ? 'Resume it, or save a new address, first: until then nothing is sent to it.' : 'There is nothing to pause; resume it to send again.'}`;
    case 'in_flight':
      return 'This delivery is being sent right now. Resend it once this attempt shows in the log.';
    case 'no_topic':
      return 'The gateway has not recorded any event yet, so there is nothing to recover.';
    default:
      return null;
  }
}
