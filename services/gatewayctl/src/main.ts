import { Command } from 'commander';
import { loadConfig, withLocalSettings } from '@gw/config';
import { createPool, migrate, type Pool } from '@gw/db';
import type { PolicyModule } from '@gw/policy';
import { SecretBox } from '@gw/security';
import {
  createApiKey,
  createCustomer,
  createInstance,
  createPbx,
  disablePbx,
  instanceStatus,
  listApiKeys,
  revokeApiKey,
  rotatePbxSecret,
  setInstanceWebhook,
  setPbxTemplate,
} from '@gw/accounts';
import { CliError, actionWrapper } from './action.ts';
import { createDemo } from './accounts/demo.ts';
import { registerComplianceCommands } from './compliance/index.ts';
import { simulate } from './accounts/simulator.ts';
import { allowPurposes, liftRestriction, listSuppressions, pauseInstance, resumeInstance, setLimits, setPlan, suppress, toggleModules, unsuppress } from './policy/commands.ts';
import { FactLog } from './policy/fact-log.ts';
import { listRestrictions } from './instances/restrictions.ts';
import { operatorAudit } from './audit.ts';
import { destinationRules, registerWebhookCommands, wordList } from './webhooks/commands.ts';
import { registerDlqCommands } from './dlq/commands.ts';
import { registerSecretsCommands } from './secrets/index.ts';
import { registerLimitCommands } from './limits/commands.ts';

// On a local stack (make run), the stack's own settings; a deployment sets GATEWAY_ENV and its own.
const config = loadConfig(withLocalSettings());
for (const deprecation of config.deprecations) process.stderr.write(`gatewayctl: ${deprecation}\n`);
// Created on first use: creating the pool connects (it reads the server's types), so an action
// checks its arguments and the secret key first.
let pool: Promise<Pool> | undefined;
const db = () => (pool ??= createPool(config.databaseUrl, { maxConnections: 2 }));
const box = () => SecretBox.fromConfig(config.secretKey);
const facts = new FactLog(config);

/** Records an account change in the audit trail, by the operator (GATEWAY_OPERATOR or USER). */
const audit = operatorAudit(facts, () => db());

const action = actionWrapper(async () => {
  await pool?.then((opened) => opened.end(), () => undefined);
  await facts.close();
});

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
    const created = await createCustomer(await db(), facts, opts.name);
    await audit({ customerId: created.customer_id }, { action: 'customer.created', subjectId: created.customer_id, details: { name: opts.name } });
    if (!opts.plan) return created;
    const plan = await setPlan(await db(), facts, { customerId: created.customer_id, plan: opts.plan, reason: 'plan chosen at sign-up' });
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
    setPlan(await db(), facts, { customerId: opts.customer, plan: opts.plan, days: opts.days, reason: opts.reason, by: opts.by })));
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
    setLimits(await db(), facts, { customerId: opts.customer, ...opts })));
customer
  .command('modules')
  .requiredOption('--customer <id>', 'customer id')
  .option('--enable <modules>', 'api,pbx', list, [])
  .option('--disable <modules>', 'api,pbx', list, [])
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; enable: string[]; disable: string[]; by?: string }) =>
    toggleModules(await db(), facts, { customerId: opts.customer, enable: opts.enable as PolicyModule[], disable: opts.disable as PolicyModule[], by: opts.by })));

customer
  .command('purposes')
  .description('limit the message purposes a customer, or one of its instances, may use')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--allow <purposes>', 'comma-separated purposes', list, [])
  .option('--instance <id>', 'only this instance')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; allow: string[]; instance?: string; by?: string }) =>
    allowPurposes(await db(), facts, { customerId: opts.customer, instanceId: opts.instance, purposes: opts.allow, by: opts.by })));

const suppression = program.command('suppression').description('opt-outs and manual suppression');
suppression
  .command('add')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--phone <number>', 'recipient, international format')
  .requiredOption('--reason <text>', 'why')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; phone: string; reason: string; by?: string }) =>
    suppress(await db(), facts, { customerId: opts.customer, phone: opts.phone, reason: opts.reason, by: opts.by })));
suppression
  .command('remove')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--phone <number>', 'recipient, international format')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { customer: string; phone: string; by?: string }) => unsuppress(await db(), facts, { customerId: opts.customer, phone: opts.phone, by: opts.by })));
suppression
  .command('list')
  .requiredOption('--customer <id>', 'customer id')
  .action(action(async (opts: { customer: string }) => listSuppressions(await db(), opts.customer)));

const instance = program.command('instance').alias('instances').description('paired instances');
instance
  .command('create')
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--name <name>', 'instance name used in API calls')
  .option('--manager-url <url>', 'instance manager (Evolution API v2) base URL', config.manager.url)
  .option('--manager-key <key>', 'instance manager apikey (defaults to the simulator key)')
  .option('--manager-instance <name>', 'existing instance name on the manager (otherwise one is created)')
  .action(action(async (opts: { customer: string; name: string; managerUrl: string; managerKey?: string; managerInstance?: string }) => {
    const keys = box();
    const created = await createInstance(await db(), keys, {
      customerId: opts.customer,
      name: opts.name,
      managerUrl: opts.managerUrl,
      managerApiKey: opts.managerKey ?? config.manager.globalApiKey,
      managerInstance: opts.managerInstance,
      createOnManager: opts.managerInstance === undefined,
    });
    await audit({ instanceId: created.instance_id }, { action: 'instance.created', subjectId: created.instance_id, details: { name: opts.name } });
    return created;
  }));
instance
  .command('webhook-url')
  .description("generate the instance's event webhook token and point its manager's webhook at the gateway (token shown once)")
  .requiredOption('--instance <id>', 'instance id')
  .option('--base-url <url>', 'public base URL of the gateway API', config.api.publicBaseUrl)
  .action(action(async (opts: { instance: string; baseUrl: string }) => {
    const keys = box();
    const set = await setInstanceWebhook(await db(), keys, { instanceId: opts.instance, baseUrl: opts.baseUrl });
    await audit({ instanceId: opts.instance }, { action: 'instance.event_webhook_set', subjectId: opts.instance });
    return set;
  }));
instance
  .command('pause')
  .requiredOption('--instance <id>', 'instance id')
  .requiredOption('--reason <text>', 'why it needs review')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { instance: string; reason: string; by?: string }) => pauseInstance(await db(), facts, { instanceId: opts.instance, reason: opts.reason, by: opts.by })));
instance
  .command('resume')
  .requiredOption('--instance <id>', 'instance id')
  .requiredOption('--reason <text>', 'the outcome of the review')
  .option('--by <operator>', 'who')
  .action(action(async (opts: { instance: string; reason: string; by?: string }) => resumeInstance(await db(), facts, { instanceId: opts.instance, reason: opts.reason, by: opts.by })));

instance
  .command('restrictions')
  .description("instances the number guard holds back from new contacts now (the chat network's warnings): signal, until, signals so far")
  .option('--customer <id>', "only this customer's")
  .action(action(async (opts: { customer?: string }) => listRestrictions(await db(), { customerId: opts.customer })));
instance
  .command('lift-restriction')
  .description('lift the restriction after a review: appends RestrictionLifted (new contacts may be messaged again)')
  .argument('[instance]', 'instance id (or give --instance)')
  .option('--instance <id>', 'instance id')
  .requiredOption('--reason <text>', 'the outcome of the review')
  .option('--by <operator>', 'who')
  .action(action(async (id: string | undefined, opts: { instance?: string; reason: string; by?: string }) => {
    const instanceId = id ?? opts.instance;
    if (!instanceId) throw new CliError('Say which instance: gatewayctl instance lift-restriction ins_… --reason …');
    return liftRestriction(await db(), facts, { instanceId, reason: opts.reason, by: opts.by });
  }));

instance
  .command('status')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => {
    const keys = box();
    return instanceStatus(await db(), keys, opts.instance);
  }));

const sim = program.command('sim').description('drive the bundled instance simulator as the other side would');
sim
  .command('pair')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => {
    const keys = box();
    return simulate(await db(), keys, config.manager.globalApiKey, opts.instance, 'pair');
  }));
sim
  .command('disconnect')
  .requiredOption('--instance <id>', 'instance id or name')
  .action(action(async (opts: { instance: string }) => {
    const keys = box();
    return simulate(await db(), keys, config.manager.globalApiKey, opts.instance, 'disconnect');
  }));
sim
  .command('inbound')
  .requiredOption('--instance <id>', 'instance id or name')
  .requiredOption('--from <phone>', 'the sender, international format')
  .requiredOption('--text <text>', 'the message text')
  .action(action(async (opts: { instance: string; from: string; text: string }) => {
    const keys = box();
    return simulate(await db(), keys, config.manager.globalApiKey, opts.instance, 'inbound', { from: opts.from, text: opts.text });
  }));
sim
  .command('call')
  .requiredOption('--instance <id>', 'instance id or name')
  .requiredOption('--from <phone>', 'the caller, international format')
  .option('--missed', 'nobody answers')
  .action(action(async (opts: { instance: string; from: string; missed?: boolean }) => {
    const keys = box();
    return simulate(await db(), keys, config.manager.globalApiKey, opts.instance, 'call', { from: opts.from, missed: Boolean(opts.missed) });
  }));

const apiKey = program.command('api-key').description('customer API keys (shown once)');
apiKey
  .command('create')
  .requiredOption('--customer <id>', 'customer id')
  .option('--name <name>', 'label', 'default')
  .action(action(async (opts: { customer: string; name: string }) => {
    const created = await createApiKey(await db(), opts.customer, opts.name);
    await audit({ customerId: opts.customer }, { action: 'api_key.created', subjectId: created.key_id, details: { name: opts.name } });
    return created;
  }));
apiKey
  .command('revoke')
  .argument('<key-id>', 'the key id (the part after gw_)')
  .action(action(async (keyId: string) => {
    const revoked = await revokeApiKey(await db(), keyId);
    await audit({ keyId }, { action: 'api_key.revoked', subjectId: keyId });
    return revoked;
  }));
apiKey
  .command('list')
  .requiredOption('--customer <id>', 'customer id')
  .action(action(async (opts: { customer: string }) => listApiKeys(await db(), opts.customer)));

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
  .action(action(async (opts: { customer: string; instance: string; hmac?: boolean; ratePerMinute?: number }) => {
    const keys = box();
    const created = await createPbx(await db(), keys, { customerId: opts.customer, instanceId: opts.instance, hmac: Boolean(opts.hmac), ratePerMinute: opts.ratePerMinute, baseUrl: config.api.publicBaseUrl });
    await audit({ pbxId: created.pbx_integration_id }, { action: 'pbx.created', subjectId: String(created.pbx_integration_id), details: { hmac: Boolean(opts.hmac) } });
    return created;
  }));
pbx
  .command('rotate-secret')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .option('--hmac', 'turn HMAC signing on (a new signing secret is issued)')
  .action(action(async (opts: { integration: number; hmac?: boolean }) => {
    const keys = box();
    const rotated = await rotatePbxSecret(await db(), keys, opts.integration, opts.hmac);
    await audit({ pbxId: opts.integration }, { action: 'pbx.secret_rotated', subjectId: String(opts.integration), details: { hmac: opts.hmac ?? null } });
    return rotated;
  }));
const templates = pbx.command('templates').description('message templates per call event');
templates
  .command('set')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .requiredOption('--event <event>', 'missed_call, after_hours, voicemail or queue_callback')
  .option('--text <template>', 'text with {customer_phone}, {agent_extension}, {queue}, {call_time}')
  .option('--enable', 'send this template for the event')
  .option('--disable', 'only record the event')
  .action(action(async (opts: { integration: number; event: string; text?: string; enable?: boolean; disable?: boolean }) => {
    const set = await setPbxTemplate(await db(), opts.integration, opts.event, opts.text, opts.enable ? true : opts.disable ? false : undefined);
    await audit({ pbxId: opts.integration }, { action: 'pbx.template_set', subjectId: String(opts.integration), details: { event: opts.event } });
    return set;
  }));
pbx
  .command('disable')
  .requiredOption('--integration <id>', 'integration id', integrationId)
  .action(action(async (opts: { integration: number }) => {
    const disabled = await disablePbx(await db(), opts.integration);
    await audit({ pbxId: opts.integration }, { action: 'pbx.disabled', subjectId: String(opts.integration) });
    return disabled;
  }));

program
  .command('demo')
  .description('create a demo customer (Growth plan) with a connected simulator instance, an API key and a PBX integration')
  .option('--pbx-hmac', 'sign the demo PBX integration with HMAC')
  .option('--webhook-url <url>', "also configure the instance's customer webhook (its signing secret is printed once)")
  .option('--webhook-events <list>', 'event names and/or groups for --webhook-url (default: recommended)', wordList)
  .action(action(async (opts: { pbxHmac?: boolean; webhookUrl?: string; webhookEvents?: string[] }) => {
    const keys = box();
    return createDemo(await db(), keys, facts, {
      baseUrl: config.api.publicBaseUrl,
      simulatorUrl: config.manager.url,
      simulatorKey: config.manager.globalApiKey,
      pbxHmac: opts.pbxHmac,
      // --webhook-events alone is refused as a missing URL rather than ignored.
      webhook: opts.webhookUrl === undefined && opts.webhookEvents === undefined
        ? undefined
        : { url: opts.webhookUrl ?? '', events: opts.webhookEvents ?? ['recommended'], rules: destinationRules(config) },
    });
  }));

registerComplianceCommands(program, { config, action });
registerWebhookCommands(program, { config, action, db, box, audit });
registerDlqCommands(program, { config, action });
registerSecretsCommands(program, { action, db, box });
registerLimitCommands(program, { action, db, facts, audit });

await program.parseAsync(process.argv);
