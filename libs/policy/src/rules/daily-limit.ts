import { quotaRule } from './quota-rule.ts';

/** Fair-use daily quota per customer: accepted sends only, calendar day of the quota offset. */
export const dailyLimit = quotaRule('day', 'daily_limit', 'daily_message_limit_exceeded');
