import { quotaRule } from './quota-rule.ts';

/** Fair-use monthly quota per customer: accepted sends only, calendar month of the quota offset. */
export const monthlyLimit = quotaRule('month', 'monthly_limit', 'monthly_message_limit_exceeded');
