import { Command } from 'commander';
import { loadConfig, withLocalSettings } from '@gw/config';
import { createPool, migrate, type Pool } from '@gw/db';
import type { PolicyModule } from '@gw/policy';
import { SecretBox } from '@gw/security';
import { createApiKey, listApiKeys, revokeApiKey } from './accounts/api-keys.ts';
import { CliError, createCustomer } from './accounts/customers.ts';
import { createDemo } from './accounts/demo.ts';
import { createInstance } from './accounts/instances.ts';
import { setInstanceWebhook } from './accounts/instance-webhook.ts';
import { registerComplianceCommands } from './compliance/index.ts';
import { print } from './output.ts';
import { instanceStatus, simulate } from './accounts/simulator.ts';
import { createPbx, disablePbx, rotatePbxSecret, setPbxTemplate } from './pbx/commands.ts';
import { allowPurposes, listSuppressions, pauseInstance, resumeInstance, setLimits, setPlan, suppress, toggleModules, unsuppress } from './policy/commands.ts';
import { FactLog } from './policy/fact-log.ts';
import { destinationRules, registerWebhookCommands, wordList } from './webhooks/commands.ts';
import { registerDlqCommands } from './dlq/commands.ts';
import { registerSecretsCommands } from './secrets/index.ts';
import { checkArguments } from './input-checks.ts';

// On a local stack (make run), the stack's own settings; a deployment sets GATEWAY_ENV and its own.
const config = loadConfig(withLocalSettings());
let pool: Pool | undefined;
const db = () => (pool ??= createPool(config.databaseUrl, 2));
const box = () => SecretBox.fromConfig(config.secretKey);
const facts = new FactLog(config);

/** Wraps an action: prints its result, and turns failures into one clear line and exit code 1. */
function action<A extends unknown[]>(run: (...args: A) => Promise<unknown>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    try {
      checkArguments(args.slice(0, -1));
      print(await run(...args), json);
    } catch (error) {
      const message = error instanceof CliError ? error.message : `Failed: ${(error as Error).message ?? 'unexpected error'}`;
      if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
      else process.stderr.write(`${message}\n`);
      process.exitCode = 1;
    } finally {
      await pool?.end();
      await facts.close();
    }
  };
}

const int = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${value} is not a non-negative whole number.`);
  return n;
};
const list = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];

const program = new Command('gatewayctl')
  .description('Operator CLI of the chat-messaging gateway')
  .option('--json', 'print machine-readable JSON');

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(action(async () => {
    await migrate(config.databaseUrl);
    return { migrated: true };
  }));

const customer = program.command('customer').description('customers, plans, limits and modules');
customer
  .command('create')
  .requiredOption('--name <name>', 'display name')
  .option('--plan <plan>', 'starter, growth or scale')
  .action(action(async (opts: { name: string; plan?: string }) => {
    const created = await createCustomer(db(), facts, opts.name);
    if (!opts.plan) return created;
    const plan = await setPlan(db(), facts, { customerId: created.customer_id, plan: opts.plan, reason: 'plan chosen at sign-up' });
    return { ...created, plan: plan.plan, valid_until: plan.valid_until };
  }));
customer
  .command('set-plan')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--plan <plan>', 'starter, growth, scale, or none')
  .option('--days <n>', 'period length in days (default: the plan period, 30)', int)
  .option('--reason <text>', 'why', 'plan change')
  .option('--by <operator>', 'who (default: $GATEWAY_OPERATOR or $USER)')
  .action(action(async (opts: { customer: string; plan: string; days?: number; reason: string; by?: string }) =>
    setPlan(db(), facts, { customerId: opts.customer, plan: opts.plan, days: opts.days, reason: opts.reason, by: opts.by })));
customer
  .command('set-limits')
  .description('raise limits after manual review (recorded with who and why)')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--reason <text>', 'the outcome of the manual review')
  .option('--daily <n>', 'daily message limit', int)
  .option('--monthly <n>', 'monthly message limit', int)
  .option('--burst <n>', 'velocity: instance bucket capacity', int)
  .option('--refill-per-minute <n>', 'velocity: sustained sends per minute per instance', int)
  .option('--recipient-interval-ms <n>', 'velocity: minimum gap between sends to one recipient', int)
  .option('--bulk-recipients <n>', 'bulk detection: distinct recipients of one body per window', int)
  .option('--by <operator>', 'who granted it')
  .action(action(async (opts: { customer: string; reason: string; daily?: number; monthly?: number; burst?: number; refillPerMinute?: number; recipientIntervalMs?: number; bulkRecipients?: number; by?: string }) =>
    setLimits(db(), facts, { customerId: opts.customer, ...opts })));
customer
  .command('modules')
  .requiredOption('--customer <id>', 'customer id')
  .option('--enable <modules>', 'api,pbx', list, [])
  .option('--disable <modules>', 'api,pbx', list, [])
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; enable: string[]; disable: string[]; by?: string }) =>
    toggleModules(db(), facts, { customerId: opts.customer, enable: opts.enable as PolicyModule[], disable: opts.disable as PolicyModule[], by: opts.by })));

customer
  .command('purposes')
  .description('limit the message purposes a customer, or one of its instances, may use')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--allow <purposes>', 'comma-separated purposes', list, [])
  .option('--instance <id>', 'only this instance')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; allow: string[]; instance?: string; by?: string }) =>
    allowPurposes(db(), facts, { customerId: opts.customer, instanceId: opts.instance, purposes: opts.allow, by: opts.by })));

const suppression = program.command('suppression').description('opt-outs and manual suppression');
suppression
  .command('add')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--phone <number>', 'recipient, international format')
  .requiredOption('--reason <text>', 'why')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; phone: string; reason: string; by?: string }) =>
    suppress(db(), facts, { customerId: opts.customer, phone: opts.phone, reason: opts.reason, by: opts.by })));
suppression
  .command('remove')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--phone <number>', 'recipient, international format')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; phone: string; by?: string }) => unsuppress(db(), facts, { customerId: opts.customer, phone: opts.phone, by: opts.by })));
suppression
  .command('list')
  .requiredOption('--customer <id>', 'customer id')
  .action(action(async (opts: { customer: string }) => listSuppressions(db(), opts.customer)));

const instance = program.command('instance').description('paired instances');
instance
  .command('create')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--name <name>', 'instance name used in API calls')
  .option('--manager-url <url>', 'instance manager (Evolution API v2) base URL', config.simulator.url)
  .option('--manager-key <key>', 'instance manager apikey (defaults to the simulator key)')
  .option('--manager-instance <name>', 'existing instance name on the manager (otherwise one is created)')
  .action(action(async (opts: { customer: string; name: string; managerUrl: string; managerKey?: string; managerInstance?: string }) =>
    createInstance(db(), box(), {
      customerId: opts.customer,
      name: opts.name,
      managerUrl: opts.managerUrl,
      managerApiKey: opts.managerKey ?? config.simulator.globalApiKey,
      managerInstance: opts.managerInstance,
      createOnManager: opts.managerInstance === undefined,
    })));
instance
  .command('webhook-url')
  .description("generate the instance's event webhook token and point its manager's webhook at the gateway (token shown once)")
  .requiredOption('--instance <id>', 'instance id')
  .option('--base-url <url>', 'public base URL of the gateway API', config.api.publicBaseUrl)
  .action(action(async (opts: { instance: string; baseUrl: string }) => setInstanceWebhook(db(), box(), { instanceId: opts.instance, baseUrl: opts.baseUrl })));
instance
  .command('pause')
  .requiredOption('--instance <id>', 'instance id')
  .requiredOption('--reason <text>', 'why it needs review')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { instance: string; reason: string; by?: string }) => pauseInstance(db(), facts, { instanceId: opts.instance, reason: opts.reason, by: opts.by })));
instance
  .command('resume')
  .requiredOption('--instance <id>', 'instance id')
  .requiredOption('--reason <text>', 'the outcome of the review')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { instance: string; reason: string; by?: string }) => resumeInstance(db(), facts, { instanceId: opts.instance, reason: opts.reason, by: opts.by })));

instance
  .command('status')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => instanceStatus(db(), box(), opts.instance)));

const sim = program.command('sim').description('drive the bundled instance simulator as the other side would');
sim
  .command('pair')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => simulate(db(), box(), config.simulator.globalApiKey, opts.instance, 'pair')));
sim
  .command('disconnect')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => simulate(db(), box(), config.simulator.globalApiKey, opts.instance, 'disconnect')));
sim
  .command('inbound')
  .requiredOption('--instance <id>', 'instance id or name')
  .requiredOption('--from <phone>', 'the sender, international format')
  .requiredOption('--text <text>', 'the message text')
  .action(action(async (opts: { instance: string; from: string; text: string }) =>
    simulate(db(), box(), config.simulator.globalApiKey, opts.instance, 'inbound', { from: opts.from, text: opts.text })));
sim
  .command('call')
  .requiredOption('--instance <id>', 'instance id or name')
  .requiredOption('--from <phone>', 'the caller, international format')
  .option('--missed', 'nobody answers')
  .action(action(async (opts: { instance: string; from: string; missed?: boolean }) =>
    simulate(db(), box(), config.simulator.globalApiKey, opts.instance, 'call', { from: opts.from, missed: Boolean(opts.missed) })));

const apiKey = program.command('api-key').description('customer API keys (shown once)');
apiKey
  .command('create')
  .requiredOption('--customer <id>', 'customer id')
  .option('--name <name>', 'label', 'default')
  .action(action(async (opts: { customer: string; name: string }) => createApiKey(db(), opts.customer, opts.name)));
apiKey
  .command('revoke')
  .argument('<key-id>', 'the key id (the part after gw_)')
  .action(action(async (keyId: string) => revokeApiKey(db(), keyId)));
apiKey
  .command('list')
  .requiredOption('--customer <id>', 'customer id')
  .action(action(async (opts: { customer: string }) => listApiKeys(db(), opts.customer)));

const pbx = program.command('pbx').description('PBX integrations (secrets shown once)');
const integrationId = (value: string) => {
  if (!/^\d{1,9}$/.test(value)) throw new CliError(`${value} is not an integration id.`);
  return Number(value);
};
pbx
  .command('create')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--instance <id>', 'the instance to send through')
  .option('--hmac', 'also require an HMAC signature on every request')
  .option('--rate-per-minute <n>', 'requests per minute before 429', int)
  .action(action(async (opts: { customer: string; instance: string; hmac?: boolean; ratePerMinute?: number }) =>
    createPbx(db(), box(), { customerId: opts.customer, instanceId: opts.instance, hmac: Boolean(opts.hmac), ratePerMinute: opts.ratePerMinute, baseUrl: config.api.publicBaseUrl })));
pbx
  .command('rotate-secret')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .option('--hmac', 'turn HMAC signing on (a new signing secret is issued)')
  .action(action(async (opts: { integration: number; hmac?: boolean }) => rotatePbxSecret(db(), box(), opts.integration, opts.hmac)));
const templates = pbx.command('templates').description('message templates per call event');
templates
  .command('set')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .requiredOption('--event <event>', 'missed_call, after_hours, voicemail or queue_callback')
  .option('--text <template>', 'text with {customer_phone}, {agent_extension}, {queue}, {call_time}')
  .option('--enable', 'send this template for the event')
  .option('--disable', 'only record the event')
  .action(action(async (opts: { integration: number; event: string; text?: string; enable?: boolean; disable?: boolean }) =>
    setPbxTemplate(db(), opts.integration, opts.event, opts.text, opts.enable ? true : opts.disable ? false : undefined)));
pbx
  .command('disable')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .action(action(async (opts: { integration: number }) => disablePbx(db(), opts.integration)));

program
  .command('demo')
  .description('create a demo customer (Growth plan) with a connected simulator instance, an API key and a PBX integration')
  .option('--pbx-hmac', 'sign the demo PBX integration with HMAC')
  .option('--webhook-url <url>', "also configure the instance's customer webhook (its signing secret is printed once)")
  .option('--webhook-events <list>', 'event names and/or groups for --webhook-url (default: recommended)', wordList)
  .action(action(async (opts: { pbxHmac?: boolean; webhookUrl?: string; webhookEvents?: string[] }) =>
    createDemo(db(), box(), facts, {
      baseUrl: config.api.publicBaseUrl,
      simulatorUrl: config.simulator.url,
      simulatorKey: config.simulator.globalApiKey,
      pbxHmac: opts.pbxHmac,
      // --webhook-events alone is refused as a missing URL rather than ignored.
      webhook: opts.webhookUrl === undefined && opts.webhookEvents === undefined
        ? undefined
        : { url: opts.webhookUrl ?? '', events: opts.webhookEvents ?? ['recommended'], rules: destinationRules(config) },
    })));

registerComplianceCommands(program, { config });
registerWebhookCommands(program, { config, action, db, box });
registerDlqCommands(program, { config, action });
registerSecretsCommands(program, { action, db, box });

await program.parseAsync(process.argv);
