import { textProblem } from '@gw/contract';
import { CliError } from './action.ts';

/** The longest value an operator gives a command (a name, a reason, a template). */
const MAX_ARGUMENT = 4096;

/**
 * The CLI is a boundary too: names, reasons and templates an operator types end up in events on
 * Kafka and in Postgres, so they follow the same rule as the API's fields (no NUL, no unpaired
 * surrogate, bounded). Checks every string argument and option value of a command.
 */
export function checkArguments(args: unknown[]): void {
  const strings = (value: unknown): string[] => (typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  for (const arg of args) {
    if (arg !== null && typeof arg === 'object' && !Array.isArray(arg)) {
      // The options of a command: named as the operator typed them.
      for (const [name, value] of Object.entries(arg)) {
        for (const item of strings(value)) refuse(item, `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
      }
    } else {
      for (const item of strings(arg)) refuse(item, 'an argument');
    }
  }
}

function refuse(value: string, what: string): void {
  const problem = textProblem(value, MAX_ARGUMENT);
  if (problem) throw new CliError(`${what} ${problem}; use text without NUL characters or unpaired surrogates, at most ${MAX_ARGUMENT} characters.`);
}
