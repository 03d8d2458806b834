import type { Command } from 'commander';
import type { Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import type { ActionWrapper } from '../action.ts';
import { rotateSecrets, secretsStatus } from './rotate.ts';

export { SEALED_COLUMNS, type SealedColumn } from './columns.ts';
export { rotateSecrets, secretsStatus, resealRow, type RotateReport, type StatusReport, type UnopenedValue } from './rotate.ts';

export interface SecretsCommandDeps {
  action: ActionWrapper;
  /** The pool, created (and connected) on first use. */
  db: () => Promise<Pool>;
  /** The keyring from the configuration (SecretBox.fromConfig): refuses without a configured key. */
  box: () => SecretBox;
}

/** Adds `secrets status|rotate` to the operator CLI (docs/decisions.md, "Secrets at rest"). */
export function registerSecretsCommands(program: Command, deps: SecretsCommandDeps): void {
  const { action, db, box } = deps;
  const secrets = program.command('secrets').description('secrets sealed at rest: which keys seal them, and re-sealing with the current key');

  secrets
    .command('status')
    .description('per table, how many sealed values each key id seals, and which key id is current (no secret is opened)')
    .action(action(async () => {
      const keys = box(); // before connecting: a missing key is refused first
      return secretsStatus(await db(), keys);
    }));

  secrets
    .command('rotate')
    .description('re-seal every sealed value with the current key (GATEWAY_SECRET_KEY); older keys come from GATEWAY_SECRET_KEYS_PREVIOUS. Exit 1 if any value could not be opened')
    .action(action(async (_opts: unknown, command: Command) => {
      const keys = box();
      const report = await rotateSecrets(await db(), keys);
      if (report.failed.length > 0) {
        process.exitCode = 1;
        if (!command.optsWithGlobals().json) {
          const rows = report.failed.map((f) => `${f.table} ${f.id} (${f.reason}${f.kid ? ` ${f.kid}` : ''})`).join(', ');
          process.stderr.write(`${report.failed.length} sealed value(s) could not be opened and were left as they are: ${rows}. Add their keys to GATEWAY_SECRET_KEYS_PREVIOUS and run again.\n`);
        }
      }
      return report;
    }));
}
