// What an operator is told when a webhook operation (@gw/accounts) refuses: the operation's own
// message, and where there is one, the gatewayctl command or setting that is the way forward.
import { checkWebhookChoice as checkChoice, WebhookError, type DestinationRules, type WebhookChoice } from '@gw/accounts';
import type { WebhookDestinationError } from '@gw/webhooks';

/** How to open a blocked range (a receiver on your own network) or plain http on purpose, named from the refusal. */
function openingHint(error: WebhookDestinationError): string {
  if (error.code === 'https_required') {
    return ' Plain http:// is refused by default (events carry message text and phone numbers); to allow it on purpose, set WEBHOOK_ALLOW_HTTP=true for gatewayctl and the webhooks service alike (a local stack started with make run does).';
  }
  if (error.code !== 'destination_blocked') return '';
  const ranges = [...new Set(((error.details.blocked ?? []) as Array<{ range?: string }>).map((b) => b.range).filter(Boolean))];
  const example = ranges.length > 0 ? ranges.join(',') : '127.0.0.0/8';
  return ` To allow it on purpose, open the range for gatewayctl and the webhooks service alike: WEBHOOK_ALLOW_CIDRS=${example} (a local stack started with make run opens 127.0.0.0/8 for both).`;
}

/** The refusal with the operator's next step added; anything else as it is. */
export function withOperatorWords(error: unknown): unknown {
  if (!(error instanceof WebhookError)) return error;
  const { instanceId, destination, doing } = error.details;
  switch (error.refusal) {
    case 'no_webhook':
      return new WebhookError(error.code, error.refusal, `Instance ${instanceId} has no webhook; configure one with: gatewayctl webhook set --instance ${instanceId} --url URL --events recommended`, error.details);
    case 'disabled':
      // A refused resend or recover says how to resume (a refused pause says so itself).
      if (doing === undefined) return error;
      return new WebhookError(error.code, error.refusal, `${error.message.replace(/\.$/, '')}: gatewayctl webhook resume --instance ${instanceId}`, error.details);
    case 'destination_refused':
      return destination ? new WebhookError(error.code, error.refusal, `${error.message}${openingHint(destination)}`, error.details) : error;
    default:
      return error;
  }
}

/** Runs a webhook operation, its refusals in the operator's words. */
export async function operatorWords<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw withOperatorWords(error);
  }
}

/** checkWebhookChoice, a refused destination saying which range to open. */
export const checkWebhookChoice = (url: string, eventWords: readonly string[], rules: DestinationRules): Promise<WebhookChoice> =>
  operatorWords(checkChoice(url, eventWords, rules));
