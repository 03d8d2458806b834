import { AccountError } from '@gw/accounts';
import type { Command } from 'commander';
import { checkArguments } from './input-checks.ts';
import { print } from './output.ts';

/**
 * An error whose message is meant for the operator; so is an AccountError's (@gw/accounts).
 * Anything else is reported generically.
 */
export class CliError extends Error {}

/** Wraps a command's work: see actionWrapper. */
export type ActionWrapper = <A extends unknown[]>(run: (...args: A) => Promise<unknown>) => (...args: A) => Promise<void>;

/** Whether the command was given --json (commander passes the command as the last argument). */
export function wantsJson(args: unknown[]): boolean {
  return Boolean((args[args.length - 1] as Command).optsWithGlobals().json);
}

/**
 * The one wrapper of every gatewayctl action: checks the operator's text, prints what the work
 * returns (as JSON with --json; nothing for a command that printed itself), turns a failure into
 * one line (or {"error"} with --json) and exit code 1, and always releases the connections.
 */
export function actionWrapper(release: () => Promise<void>): ActionWrapper {
  return <A extends unknown[]>(run: (...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      const json = wantsJson(args);
      try {
        checkArguments(args.slice(0, -1));
        const result = await run(...args);
        if (result !== undefined) print(result, json);
      } catch (error) {
        const message = error instanceof CliError || error instanceof AccountError ? error.message : `Failed: ${(error as Error).message ?? 'unexpected error'}`;
        if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
        else process.stderr.write(`${message}\n`);
        process.exitCode = 1;
      } finally {
        await release();
      }
    };
}
