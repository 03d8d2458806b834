// What the public pages (acceptable use, responsible messaging) say, built from the policy the
// engine decides with and the keywords the instance-events service acts on, never written out by
// hand: a threshold changed in the configuration changes the pages, and every rule the engine
// runs is on them with the code it refuses with (describeRules, as `gatewayctl policy-log rules`
// prints it).
import type { GatewayConfig } from '@gw/config';
import { MESSAGE_PURPOSES } from '@gw/contract';
import { calendarName, count, percent } from './format.ts';
import { createPolicy, describeRules, type PlanConfig, type Policy, type PolicyConfig } from '@gw/policy';

/** Everything the public pages are built from. */
export interface MessagingRules {
  /** The policy the engine decides with: createPolicy(), as the policy service makes it. */
  policy: Policy;
  /** Inbound messages that opt a recipient out, or back in (config.instanceEvents, what the instance-events service matches). */
  optOutKeywords: readonly string[];
  optInKeywords: readonly string[];
}

export function messagingRules(config: Pick<GatewayConfig, 'instanceEvents'>, policy: Policy = createPolicy()): MessagingRules {
  return { policy, optOutKeywords: config.instanceEvents.optOutKeywords, optInKeywords: config.instanceEvents.optInKeywords };
}

/** Words for people; anything the configuration adds later shows under its own id. */
const PURPOSES: Record<string, { label: string; examples: string }> = {
  transactional: { label: 'Transactional', examples: 'order and payment confirmations, shipping updates, receipts, appointment confirmations' },
  operational: { label: 'Operational', examples: 'service changes and outages, account notices, reminders of something the recipient booked' },
  support: { label: 'Support', examples: 'answers to the recipient’s questions, ticket updates, callbacks they asked for' },
  internal_team: { label: 'Internal team', examples: 'messages to your own staff: shifts, alerts, on-call pages' },
  authentication: { label: 'Authentication', examples: 'one-time codes, sign-in and security alerts' },
};

const CATEGORIES: Record<string, string> = {
  promotional_content: 'Marketing and promotions: sales, discounts, promo codes, “buy now”, calls to subscribe',
  political_content: 'Political messaging: calls to vote, campaigns, donations to parties or candidates',
  shaft_sex: 'Sexual or adult content',
  shaft_hate: 'Hate speech',
  shaft_alcohol: 'Promotion of alcohol',
  shaft_firearms: 'Firearms and ammunition',
  shaft_tobacco: 'Tobacco, vaping and nicotine products',
};

const SIGNALS: Record<string, string> = {
  violationRate: 'Messages refused for their content (policy_violation), of the messages whose content was checked',
  optOutRate: 'Recipients who opted out on the instance, of the messages it sent',
  deliveryFailureRate: 'Failed deliveries, of all delivery outcomes',
};

export const purposeLabel = (purpose: string) => PURPOSES[purpose]?.label ?? purpose;
export const categoryLabel = (reason: string) => CATEGORIES[reason] ?? reason.replace(/_/g, ' ');

/** 3000 → "3 seconds", 3600000 → "1 hour". */
export function duration(ms: number): string {
  const units: Array<[number, string]> = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']];
  for (const [size, name] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${name}${ms / size === 1 ? '' : 's'}`;
  }
  return `${ms} ms`;
}


export interface PlanView {
  id: string;
  name: string;
  price: string;
  daily: string;
  monthly: string;
  calendar: string;
  burst: string;
  refill: string;
  recipientInterval: string;
  bulk: string;
  bulkWindow: string;
  /** Content threshold per category (the default unless the plan sets its own). */
  contentThresholds: Record<string, number>;
}

function planView(plan: PlanConfig, config: PolicyConfig): PlanView {
  return {
    id: plan.id,
    name: plan.name,
    price: `${plan.priceUsd} USD per ${plan.periodDays} days`,
    daily: count(plan.dailyLimit),
    monthly: count(plan.monthlyLimit),
    calendar: calendarName(plan.quotaWindowOffsetMinutes ?? config.quotaWindowOffsetMinutes),
    burst: count(plan.velocity.burst),
    refill: count(plan.velocity.refillPerMinute),
    recipientInterval: duration(plan.velocity.recipientMinIntervalMs),
    bulk: count(plan.bulk.maxDistinctRecipients),
    bulkWindow: duration(plan.bulk.windowMs),
    contentThresholds: Object.fromEntries(config.content.categories.map((c) => [c.reason, plan.contentThresholds?.[c.reason] ?? config.content.defaultThreshold])),
  };
}

/** What a rule's thresholds are: sentences, and a table where they depend on the plan. */
export interface RuleThresholds {
  /** Settings that do not depend on the plan. */
  facts: string[];
  /** A table of the thresholds by plan: its header, then its rows (each row's first cell names it). */
  table: { head: string[]; rows: string[][] } | null;
}

function thresholdsOf(rule: string, rules: MessagingRules, plans: PlanView[]): RuleThresholds {
  const { config } = rules.policy;
  // One row per plan.
  const perPlan = (columns: string[], values: (p: PlanView) => string[]) => ({ head: ['Plan', ...columns], rows: plans.map((p) => [p.name, ...values(p)]) });
  switch (rule) {
    case 'module_enabled':
      return { facts: [`A new account has the API module ${config.defaultModules.api ? 'on' : 'off'} and the PBX module ${config.defaultModules.pbx ? 'on' : 'off'}; the gateway's operator switches modules.`], table: null };
    case 'active_plan':
      return { facts: [`Plans: ${plans.map((p) => `${p.name} (${p.price})`).join(', ')}. Sending needs a plan whose paid period has not ended.`], table: null };
    case 'purpose_allowed':
      return { facts: [`Allowed purposes: ${MESSAGE_PURPOSES.join(', ')}. Any other purpose (marketing, for one) is refused. Your account may narrow the list, per instance too.`], table: null };
    case 'recipient_not_suppressed':
      return { facts: [`A recipient who replies ${rules.optOutKeywords.join(', ')} is opted out of your messages; ${rules.optInKeywords.join(', ')} opts them back in. Recipients you suppress yourself are refused the same way.`], table: null };
    case 'instance_not_paused':
      return { facts: [`An instance is paused for review when, over the last ${config.autoPause.windowHours} hours, ${autoPauseSignals(config).map((s) => `${s.id} reaches ${s.threshold} (counted from ${s.minVolume})`).join(', or ')}.`], table: null };
    case 'daily_limit':
      return { facts: ['Accepted messages of the whole account (all instances) per calendar day; refused ones do not count.'], table: perPlan(['Messages a day', 'Day starts at midnight'], (p) => [p.daily, p.calendar]) };
    case 'monthly_limit':
      return { facts: ['Accepted messages of the whole account per calendar month.'], table: perPlan(['Messages a month', 'Month starts at midnight'], (p) => [p.monthly, p.calendar]) };
    case 'velocity':
      return {
        facts: ['Each instance has a bucket of sends that refills continuously; one recipient gets at most one message per interval from an instance.'],
        table: perPlan(['Burst', 'Refill per minute', 'Interval per recipient'], (p) => [p.burst, p.refill, p.recipientInterval]),
      };
    case 'content_policy':
      return {
        facts: [
          `Content rules version ${config.content.version}. Each category adds up the weights of its matching patterns (strong 2, weak 1); reaching the category's threshold refuses the message, whatever its purpose.`,
        ],
        // One row per category: the threshold of each plan.
        table: { head: ['Category', ...plans.map((p) => p.name)], rows: config.content.categories.map((c) => [c.reason, ...plans.map((p) => String(p.contentThresholds[c.reason]))]) },
      };
    case 'url_shortener':
      return { facts: [`Links through these public shorteners (and their subdomains) are refused: ${config.urlShorteners.join(', ')}. Your own and branded domains are fine.`], table: null };
    case 'bulk_campaign':
      return {
        facts: ['The same message (compared without case, spacing or invisible characters; digits count) to more distinct recipients than this within the window is a bulk campaign.'],
        table: perPlan(['Distinct recipients, at most', 'Window'], (p) => [p.bulk, p.bulkWindow]),
      };
    default:
      return { facts: [], table: null };
  }
}

function autoPauseSignals(config: PolicyConfig) {
  const { windowHours: _hours, ...signals } = config.autoPause;
  return Object.entries(signals).map(([id, limits]) => ({
    id: id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    label: SIGNALS[id] ?? id,
    threshold: percent(limits.threshold),
    minVolume: count(limits.minVolume),
  }));
}

/** The data of both public pages, from one policy and its keywords. */
export function publicPolicyPages(rules: MessagingRules) {
  const { config } = rules.policy;
  const plans = Object.values(config.plans).map((p) => planView(p, config));
  const described = describeRules(rules.policy.rules);
  return {
    version: rules.policy.version,
    plans,
    purposes: MESSAGE_PURPOSES.map((id) => ({ id, label: purposeLabel(id), examples: PURPOSES[id]?.examples ?? '' })),
    categories: config.content.categories.map((c) => ({
      reason: c.reason,
      label: categoryLabel(c.reason),
      patterns: c.patterns.map((p) => ({ id: p.id, weight: p.weight, strength: p.weight >= config.content.defaultThreshold ? 'strong' : 'weak', source: p.source })),
    })),
    contentThreshold: config.content.defaultThreshold,
    urlShorteners: config.urlShorteners,
    rules: described.map((r) => ({ ...r, thresholds: thresholdsOf(r.name, rules, plans) })),
    /** The codes a refusal can carry, each once, in rule order. */
    codes: [...new Map(described.map((r) => [r.code, { code: r.code, status: r.status, rules: described.filter((d) => d.code === r.code).map((d) => d.name) }])).values()],
    autoPause: { windowHours: config.autoPause.windowHours, signals: autoPauseSignals(config) },
    optOutKeywords: rules.optOutKeywords,
    optInKeywords: rules.optInKeywords,
    defaultModules: config.defaultModules,
  };
}

export type PublicPolicyPages = ReturnType<typeof publicPolicyPages>;
