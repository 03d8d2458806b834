import { scoreContent, worstViolation } from '../content/score-content.ts';
import type { Rule } from '../types.ts';
import { fail, pass } from './verdict.ts';

const name = 'content_policy';

/**
 * No marketing, political or SHAFT content (sex, hate, alcohol, firearms, tobacco). Promotional
 * language is refused whatever the declared purpose, since every allowed purpose is non-marketing.
 */
export const contentPolicy: Rule = {
  name,
  code: 'policy_violation',
  summary: 'No promotional, political or SHAFT content (versioned keyword/regex rules, thresholds per plan).',
  check: ({ normalised, content, config, plan }) => {
    const scores = scoreContent(normalised, content, plan?.plan.contentThresholds);
    const worst = worstViolation(scores);
    if (!worst) return pass(name, { rules_version: config.content.version });
    return fail(name, 'policy_violation', 'The message content is not allowed by the responsible-messaging policy.', {
      reason: worst.reason,
      score: worst.score,
      threshold: worst.threshold,
      matched: worst.matched,
      rules_version: config.content.version,
    });
  },
};
