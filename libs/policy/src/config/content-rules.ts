/**
 * Prohibited-content rules as DATA (spec 1: no marketing, political or SHAFT content). Each
 * category adds up the weights of its distinct matching patterns; reaching the category's
 * threshold refuses the message. Strong signals weigh 2 and refuse on their own; weak, ambiguous
 * words weigh 1 and need a second signal, which keeps transactional texts ("your wine order has
 * shipped", "free shipping on this order") out of trouble. Patterns run on the normalised text
 * (lower case, NFKC, single spaces), so they are written in lower case.
 *
 * Bump `version` on any change: it is part of POLICY_VERSION, recorded on every decision.
 */
export interface ContentPattern {
  id: string;
  /** RegExp source, compiled with Unicode semantics; lower case (it runs on normalised, lower-cased text). */
  source: string;
  weight: number;
}

export interface ContentCategory {
  /** Machine-readable reason put in details.reason of the policy_violation. */
  reason: string;
  patterns: readonly ContentPattern[];
}

export interface ContentRules {
  version: string;
  defaultThreshold: number;
  categories: readonly ContentCategory[];
}

const strong = (id: string, source: string): ContentPattern => ({ id, source, weight: 2 });
const weak = (id: string, source: string): ContentPattern => ({ id, source, weight: 1 });

export const CONTENT_RULES: ContentRules = {
  version: 'content-2026-11-22.1',
  defaultThreshold: 2,
  categories: [
    {
      reason: 'promotional_content',
      patterns: [
        strong('percent_off', String.raw`\b\d{1,2}\s?%\s?off\b`),
        strong('buy_now', String.raw`\b(buy|shop) now\b`),
        strong('promo_code', String.raw`\b(promo|discount|coupon|voucher) ?codes?\b`),
        strong('act_fast', String.raw`\b(don'?t miss (out|this)|act (now|fast)|last chance|while (stocks?|supplies) lasts?|offer ends|sale ends)\b`),
        strong('subscribe_cta', String.raw`\b(subscribe|sign up|join) (now|today)\b`),
        strong('special_offer', String.raw`\b(exclusive|special|limited|amazing|unbeatable) (offers?|deals?|discounts?|prices?)\b`),
        strong('flash_sale', String.raw`\b(flash sale|black friday|cyber monday|clearance sale|mega sale|big sale)\b`),
        weak('sale_words', String.raw`\b(sale|deals?|offers?|discounts?|bargains?|savings)\b`),
        weak('limited_time', String.raw`\b(limited[- ]time|today only|this weekend only|hurry)\b`),
        weak('free_stuff', String.raw`\b(free (gift|trial|sample)|giveaway|win an?|prizes?)\b`),
        weak('shop_invite', String.raw`\b(new arrivals|new collection|check out our|visit our (store|shop)|shop (our|the))\b`),
      ],
    },
    {
      reason: 'political_content',
      patterns: [
        strong('vote_for', String.raw`\bvote (for|yes|no|against)\b`),
        strong('re_elect', String.raw`\bre-?elect\b`),
        strong('campaign_donation', String.raw`\b(donate|contribute|chip in) (to|for) (our|the|my) (campaign|party|candidate)\b`),
        weak('election_words', String.raw`\b(elections?|ballots?|candidates?|polling (station|place)s?|primar(y|ies) day)\b`),
        weak('party_words', String.raw`\b(political party|democrats?|republicans?|labour party|conservative party|campaign rally)\b`),
      ],
    },
    {
      reason: 'shaft_sex',
      patterns: [
        strong('adult_terms', String.raw`\b(porn\w*|xxx|nudes?|escort (service|agency)s?|sex ?chat|hook-?ups?|onlyfans|cam ?girls?|adult (content|videos?|entertainment|dating))\b`),
        weak('suggestive', String.raw`\b(sexy|sex|naughty|hot singles)\b`),
      ],
    },
    {
      reason: 'shaft_hate',
      patterns: [
        strong('hate_phrases', String.raw`\b(white power|heil hitler|ethnic cleansing|subhumans?|race war|gas the|kill all the)\b`),
        weak('supremacy', String.raw`\b(supremac(y|ist)|inferior race)\b`),
      ],
    },
    {
      reason: 'shaft_alcohol',
      patterns: [
        strong('drink_promo', String.raw`\b(happy hour|drink specials?|open bar|bottomless (brunch|drinks)|free (drinks?|shots?|beer)|(beer|wine|whisk(e)?y) tasting)\b`),
        weak('alcohol_words', String.raw`\b(beers?|wines?|vodka|whisk(e)?y|rum|gin|tequila|liquor|champagne|cocktails?|booze|spirits)\b`),
      ],
    },
    {
      reason: 'shaft_firearms',
      patterns: [
        strong('firearm_terms', String.raw`\b(firearms?|ammunition|ammo|handguns?|assault rifles?|ar-?15|ak-?47|gun (shows?|shops?|stores?|sale)|concealed carry)\b`),
        weak('gun_words', String.raw`\b(guns?|rifles?|pistols?|shotguns?)\b`),
      ],
    },
    {
      reason: 'shaft_tobacco',
      patterns: [
        strong('tobacco_terms', String.raw`\b(cigarettes?|cigars?|tobacco|vap(e|es|ing)|e-?cig(arette)?s?|juul|hookah|shisha|snus)\b`),
        weak('nicotine', String.raw`\bnicotine\b`),
      ],
    },
  ],
};
