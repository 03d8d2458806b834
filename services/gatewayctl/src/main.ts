import { Command } from 'commander';
import { loadConfig } from '@gw/config';
import { createPool, migrate, type Pool } from '@gw/db';
import { SecretBox } from '@gw/security';
import { createApiKey, listApiKeys, revokeApiKey } from './accounts/api-keys.ts';
import { CliError, createCustomer } from './accounts/customers.ts';
import { createDemo } from './accounts/demo.ts';
import { createInstance } from './accounts/instances.ts';
import { print } from './output.ts';

const config = loadConfig();
let pool: Pool | undefined;
const db = () => (pool ??= createPool(config.databaseUrl, 2));
const box = () => SecretBox.fromConfig(config.secretKey);

/** Wraps an action: prints its result, and turns failures into one clear line and exit code 1. */
function action<A extends unknown[]>(run: (...args: A) => Promise<unknown>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    try {
      print(await run(...args), json);
    } catch (error) {
      const message = error instanceof CliError ? error.message : `Failed: ${(error as Error).message ?? 'unexpected error'}`;
      if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
      else process.stderr.write(`${message}\n`);
      process.exitCode = 1;
    } finally {
      await pool?.end();
    }
  };
}

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

const customer = program.command('customer').description('customers');
customer
  .command('create')
  .requiredOption('--name <name>', 'display name')
  .action(action(async (opts: { name: string }) => createCustomer(db(), opts.name)));

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

program
  .command('demo')
  .description('create a demo customer with a connected simulator instance and an API key')
  .action(action(async () =>
    createDemo(db(), box(), { baseUrl: config.api.publicBaseUrl, simulatorUrl: config.simulator.url, simulatorKey: config.simulator.globalApiKey })));

await program.parseAsync(process.argv);
