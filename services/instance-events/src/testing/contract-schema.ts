// For tests: checks a customer webhook body against the contract's JSON Schema of its event
// (webhookEventJsonSchema, libs/webhooks), with a JSON Schema validator independent of the builder.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isWebhookEventName, webhookEventJsonSchema, type WebhookEventName } from '@gw/webhooks';

// ajv-formats is CommonJS: its function is the default export under Node's ESM loader, `.default` under some transpilers.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true }));
const validators = new Map<WebhookEventName, ValidateFunction>();

/** The problems of a body against its event's schema ([] when it conforms); an unknown event name is a problem too. */
export function contractProblems(body: string): string[] {
  const value = JSON.parse(body) as { event?: unknown };
  if (!isWebhookEventName(value.event)) return [`unknown event ${String(value.event)}`];
  let validate = validators.get(value.event);
  if (!validate) {
    validate = ajv.compile(webhookEventJsonSchema(value.event));
    validators.set(value.event, validate);
  }
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`);
}
