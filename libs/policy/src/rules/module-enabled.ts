import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'module_enabled';

/** The module the send came through (public API or PBX) must be switched on for the customer. */
export const moduleEnabled: Rule = {
  name,
  code: 'module_not_enabled',
  summary: "The customer's module for the send's source ('api' or 'pbx') is enabled. Default: api on, pbx off.",
  check: ({ command, state, config }) => {
    const enabled = state.modules[command.source] ?? config.defaultModules[command.source];
    return enabled
      ? pass(name, { module: command.source })
      : fail(name, 'module_not_enabled', `The ${command.source} module is not enabled for this account.`, { module: command.source });
  },
};
