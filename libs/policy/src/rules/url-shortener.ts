import { extractHosts, shortenerOf } from '../content/extract-hosts.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'url_shortener';

/** Public shorteners hide where a link goes; a customer's own or branded domain is fine. */
export const urlShortener: Rule = {
  name,
  code: 'policy_violation',
  summary: 'No links through public URL shorteners (bit.ly, tinyurl.com, t.co, ...); own and branded domains are allowed.',
  check: ({ command, config }) => {
    for (const host of extractHosts(command.text)) {
      const shortener = shortenerOf(host, config.urlShorteners);
      if (shortener) {
        return fail(name, 'policy_violation', 'Links through public URL shorteners are not allowed; use the full link.', { reason: 'url_shortener', host, shortener });
      }
    }
    return pass(name);
  },
};
