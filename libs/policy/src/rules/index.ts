import { firstContactLimit, instanceNotRestricted } from '../guard/rules.ts';
import type { Rule } from '../types.ts';
import { activePlan } from './active-plan.ts';
import { bulkCampaign } from './bulk-campaign.ts';
import { contentPolicy } from './content-policy.ts';
import { dailyLimit } from './daily-limit.ts';
import { instanceNotPaused } from './instance-not-paused.ts';
import { moduleEnabled } from './module-enabled.ts';
import { monthlyLimit } from './monthly-limit.ts';
import { purposeAllowed } from './purpose-allowed.ts';
import { recipientNotSuppressed } from './recipient-not-suppressed.ts';
import { urlShortener } from './url-shortener.ts';
import { velocity } from './velocity.ts';

/**
 * The fixed, documented evaluation order (docs/policy.md): account-level gates first (cheapest,
 * and the answer a customer can act on), then the recipient and instance, then quotas and
 * throttles (the number guard's first-contact caps after velocity), then the content checks. The first failure decides; the order is part of the policy.
 */
export const RULES: readonly Rule[] = [
  moduleEnabled,
  activePlan,
  purposeAllowed,
  recipientNotSuppressed,
  instanceNotPaused,
  instanceNotRestricted,
  dailyLimit,
  monthlyLimit,
  velocity,
  firstContactLimit,
  contentPolicy,
  urlShortener,
  bulkCampaign,
];
