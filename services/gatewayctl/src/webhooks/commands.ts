import type { Command } from 'commander';
import type { GatewayConfig } from '@gw/config';
import type { Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import type { SecretBox } from '@gw/security';
import { CliError } from '../accounts/customers.ts';
import { setWebhook, type DestinationRules } from './configure.ts';
import { DEFAULT_DELIVERY_LIMIT, deliveryState, listDeliveries, resendDelivery } from './deliveries.ts';
import { pauseWebhook, resumeWebhook, rotateWebhookSecret } from './lifecycle.ts';
import { recoverDeliveries } from './recover.ts';
import { showWebhook } from './show.ts';

/** main.ts's action wrapper: prints the result, turns a CliError into one line and exit code 1. */
export type ActionWrapper = <A extends unknown[]>(run: (...args: A) => Promise<unknown>) => (...args: A) => Promise<void>;

export interface WebhookCommandDeps {
  config: GatewayConfig;
  action: ActionWrapper;
  db: () => Pool;
  box: () => SecretBox;
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

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${value} is not a whole number of at least 1.`);
  return n;
}

// Option values are checked inside the actions, not by commander parsers: an error thrown by a
// parser escapes the action wrapper (a stack trace, and no {"error"} line with --json).

/** Adds `webhook set|rotate-secret|pause|resume|show|deliveries|resend|recover` to the operator CLI. */
export function registerWebhookCommands(program: Command, deps: WebhookCommandDeps): void {
  const { action, db, box, config } = deps;
  const webhook = program.command('webhook').description("customer webhooks: one endpoint per instance (the signing secret is shown once)");

  webhook
    .command('set')
    .description('create or update the instance\'s endpoint; a new one gets a signing secret, printed this once')
    .requiredOption('--instance <id>', 'instance id')
    .requiredOption('--url <url>', 'destination URL (checked against the SSRF rules)')
    .requiredOption('--events <list>', 'comma-separated event names and/or groups: recommended, all, instance, lifecycle, …', wordList)
    .action(action(async (opts: { instance: string; url: string; events: string[] }) =>
      setWebhook(db(), box(), { instanceId: opts.instance, url: opts.url, events: opts.events, rules: destinationRules(config) })));

  webhook
    .command('rotate-secret')
    .description('issue a new signing secret (printed this once)')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => rotateWebhookSecret(db(), box(), opts.instance)));

  webhook
    .command('pause')
    .description('hold deliveries: events are still queued and sent on resume')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => pauseWebhook(db(), opts.instance)));

  webhook
    .command('resume')
    .description('send again (also re-enables a disabled endpoint), with a fresh failure count')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => resumeWebhook(db(), opts.instance)));

  webhook
    .command('show')
    .description('configuration and health, with delivery counts by state (no secret)')
    .requiredOption('--instance <id>', 'instance id')
    .action(action(async (opts: { instance: string }) => showWebhook(db(), opts.instance)));

  webhook
    .command('deliveries')
    .description('recent deliveries, newest first, each with its attempts')
    .requiredOption('--instance <id>', 'instance id')
    .option('--state <state>', 'pending, in_flight, delivered or failed')
    .option('--limit <n>', `how many (default ${DEFAULT_DELIVERY_LIMIT})`)
    .action(action(async (opts: { instance: string; state?: string; limit?: string }) =>
      listDeliveries(db(), {
        instanceId: opts.instance,
        state: opts.state === undefined ? undefined : deliveryState(opts.state),
        limit: opts.limit === undefined ? undefined : positiveInt(opts.limit),
      })));

  webhook
    .command('resend')
    .description('send a delivery again now, in a new retry round (same delivery id)')
    .argument('<delivery-id>', 'the delivery id (whd_…)')
    .action(action(async (deliveryId: string) => resendDelivery(db(), deliveryId)));

  webhook
    .command('recover')
    .description('re-queue the events the endpoint missed since a time, read from the gateway-events topic')
    .requiredOption('--instance <id>', 'instance id')
    .requiredOption('--since <time>', 'ISO 8601 time, inclusive (event time)')
    .action(action(async (opts: { instance: string; since: string }) => {
      const since = isoTime(opts.since);
      const topics = new Topics(config.topicPrefix, config.topicPartitions);
      return recoverDeliveries(
        {
          pool: db(),
          kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix),
          // Decoding needs no registration: schemas are fetched by the id in each record.
          codec: new EventCodec(config.schemaRegistryUrl, topics),
          topic: topics.name('gatewayEvents'),
        },
        { instanceId: opts.instance, since },
      );
    }));
}
