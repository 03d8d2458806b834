import type { Command } from 'commander';
import type { GatewayConfig } from '@gw/config';
import type { Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import type { SecretBox } from '@gw/security';
import {
  DEFAULT_DELIVERY_LIMIT,
  DELIVERY_STATES,
  kafkaGatewayEventLog,
  listDeliveries,
  pauseWebhook,
  recoverDeliveries,
  resendDelivery,
  resumeWebhook,
  rotateWebhookSecret,
  setWebhook,
  showWebhook,
  type DeliveryState,
  type DestinationRules,
} from '@gw/accounts';
import { CliError, type ActionWrapper } from '../action.ts';
import type { Audit, OperatorChange, Subject } from '../audit.ts';
import { operatorWords } from './operator-words.ts';

export interface WebhookCommandDeps {
  config: GatewayConfig;
  action: ActionWrapper;
  /** The pool, created (and connected) on first use. */
  db: () => Promise<Pool>;
  box: () => SecretBox;
  /** Records each change in the audit trail. */
  audit: Audit;
}

export const destinationRules = (config: GatewayConfig): DestinationRules => ({ allowCidrs: config.webhooks.allowCidrs, httpsOnly: config.webhooks.httpsOnly });

/** Comma-separated words, repeatable: `--events recommended,call.missed --events instance`. */
export const wordList = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];

function isoTime(value: string): Date {
  // Date.parse also takes "March 3": insist on a date in ISO 8601 form.
  const date = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new CliError(`${value} is not an ISO 8601 time (e.g. 2026-01-31T00:00:00Z).`);
  return date;
}

function deliveryState(value: string): DeliveryState {
  if (!(DELIVERY_STATES as readonly string[]).includes(value)) throw new CliError(`Unknown delivery state ${value}: use ${DELIVERY_STATES.join(', ')}.`);
  return value as DeliveryState;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${value} is not a whole number of at least 1.`);
  return n;
}

// Option values are checked inside the actions, not by commander parsers: an error thrown by a
// parser escapes the action wrapper (a stack trace, and no {"error"} line with --json).
// The operations are @gw/accounts' (the dashboard runs them too); operatorWords adds the
// gatewayctl command or setting to a refusal where there is one.

/** Adds `webhook set|rotate-secret|pause|resume|show|deliveries|resend|recover` to the operator CLI. */
export function registerWebhookCommands(program: Command, deps: WebhookCommandDeps): void {
  const { db, box, config, audit } = deps;
  /** Runs a change, then records it. */
  const audited = async <T>(subject: Subject, change: OperatorChange | ((result: T) => OperatorChange), run: Promise<T>): Promise<T> => {
    const result = await run;
    await audit(subject, typeof change === 'function' ? change(result) : change);
    return result;
  };
  const action: ActionWrapper = (run) => deps.action((...args) => operatorWords(run(...args)));
  const webhook = program.command('webhook').description("customer webhooks: one endpoint per instance (the signing secret is shown once)");

  webhook
    .command('set')
    .description('create or update the instance\'s endpoint; a new one gets a signing secret, printed this once')
    .requiredOption('--instance <id>', 'instance id')
    .requiredOption('--url <url>', 'destination URL (checked against the SSRF rules)')
    .requiredOption('--events <list>', 'comma-separated event names and/or groups: recommended, all, instance, lifecycle, …', wordList)
    .action(action(async (opts: { instance: string; url: string; events: string[] }) => {
      const keys = box();
      // As the dashboard records it: the destination's host only (a path or query may hold a token).
      const change = (saved: { destination_url: string; events: string[] }) => ({ action: 'webhook.configured', subjectId: opts.instance, details: { destination_host: new URL(saved.destination_url).host, events: saved.events } });
      return audited({ instanceId: opts.instance }, change, setWebhook(await db(), keys, { instanceId: opts.instance, url: opts.url, events: opts.events, rules: destinationRules(config) }));
    }));

  webhook
    .command('rotate-secret')
    .description('issue a new signing secret (printed this once); the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_MS')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => {
      const keys = box();
      const rotation = { overlapMs: config.webhooks.secretOverlapMs };
      return audited({ instanceId: opts.instance }, { action: 'webhook.secret_rotated', subjectId: opts.instance }, rotateWebhookSecret(await db(), keys, opts.instance, {}, rotation));
    }));

  webhook
    .command('pause')
    .description('hold deliveries: events are still queued and sent on resume')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => audited({ instanceId: opts.instance }, { action: 'webhook.paused', subjectId: opts.instance }, pauseWebhook(await db(), opts.instance))));

  webhook
    .command('resume')
    .description('send again (also re-enables a disabled endpoint), with a fresh failure count')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => audited({ instanceId: opts.instance }, { action: 'webhook.resumed', subjectId: opts.instance }, resumeWebhook(await db(), opts.instance))));

  webhook
    .command('show')
    .description('configuration and health, with delivery counts by state (no secret)')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => showWebhook(await db(), opts.instance)));

  webhook
    .command('deliveries')
    .description('recent deliveries, newest first, each with its attempts')
    .requiredOption('--instance <id>', 'instance id')
    .option('--state <state>', 'pending, in_flight, delivered or failed')
    .option('--limit <n>', `how many (default ${DEFAULT_DELIVERY_LIMIT})`)
    .action(action(async (opts: { instance: string; state?: string; limit?: string }) => {
      const input = {
        instanceId: opts.instance,
        state: opts.state === undefined ? undefined : deliveryState(opts.state),
        limit: opts.limit === undefined ? undefined : positiveInt(opts.limit),
      };
      return listDeliveries(await db(), input);
    }));

  webhook
    .command('resend')
    .description('send a delivery again now, in a new retry round (same delivery id)')
    .argument('<delivery-id>', 'the delivery id (whd_…)')
    .action(action(async (deliveryId: string) => audited({ deliveryId }, { action: 'webhook.delivery_resent', subjectId: deliveryId }, resendDelivery(await db(), deliveryId))));

  webhook
    .command('recover')
    .description('re-queue the events the endpoint missed since a time, read from the gateway-events topic')
    .requiredOption('--instance <id>', 'instance id')
    .requiredOption('--since <time>', 'ISO 8601 time, inclusive (event time)')
    .action(action(async (opts: { instance: string; since: string }) => {
      const since = isoTime(opts.since);
      const topics = new Topics(config.topicPrefix, config.topicPartitions);
      // Decoding needs no registration: schemas are fetched by the id in each record.
      const events = kafkaGatewayEventLog(new KafkaInspector(config.kafkaBrokers, config.topicPrefix), new EventCodec(config.schemaRegistryUrl, topics), topics.name('gatewayEvents'));
      return audited({ instanceId: opts.instance }, { action: 'webhook.recovered', subjectId: opts.instance, details: { since: opts.since } }, recoverDeliveries({ pool: await db(), events }, { instanceId: opts.instance, since }));
    }));
}
