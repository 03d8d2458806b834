import type { ContentRules } from '../config/content-rules.ts';

export interface CategoryScore {
  reason: string;
  score: number;
  threshold: number;
  matched: string[];
}

/**
 * The content rules with their patterns compiled, made once with the policy (createPolicy). They
 * run on normalised text, which is lower case after NFKC (so no Kelvin sign or long s is left
 * either), and are written in lower case: a case-insensitive flag would change no match and cost
 * a Unicode case fold per character.
 */
export interface CompiledContent {
  rules: ContentRules;
  categories: Array<{ reason: string; patterns: Array<{ id: string; regex: RegExp; weight: number }> }>;
  /**
   * Every pattern in one alternation, or null: it matches exactly when one of the patterns does
   * (none uses a back reference), so a typical transactional text is cleared in one scan.
   */
  any: RegExp | null;
}

export function compileContent(rules: ContentRules): CompiledContent {
  const sources = rules.categories.flatMap((c) => c.patterns.map((p) => p.source));
  const combinable = sources.length > 0 && sources.every((s) => !/\\[1-9]|\\k</.test(s));
  return {
    rules,
    categories: rules.categories.map((category) => ({
      reason: category.reason,
      patterns: category.patterns.map((p) => ({ id: p.id, regex: new RegExp(p.source, 'u'), weight: p.weight })),
    })),
    any: combinable ? new RegExp(sources.map((s) => `(?:${s})`).join('|'), 'u') : null,
  };
}

/**
 * Scores every category of a normalised text; each distinct matching pattern counts once, so
 * repeating a weak word does not add up. Returns only categories with at least one match, in the
 * rules' order.
 */
export function scoreContent(normalised: string, content: CompiledContent, thresholds: Readonly<Record<string, number>> = {}): CategoryScore[] {
  if (content.any && !content.any.test(normalised)) return [];
  const scores: CategoryScore[] = [];
  for (const category of content.categories) {
    const matched = category.patterns.filter((p) => p.regex.test(normalised));
    if (matched.length === 0) continue;
    scores.push({
      reason: category.reason,
      score: matched.reduce((sum, p) => sum + p.weight, 0),
      threshold: thresholds[category.reason] ?? content.rules.defaultThreshold,
      matched: matched.map((p) => p.id),
    });
  }
  return scores;
}

/** The category that refuses the text: the highest score at or over its threshold (ties: rules' order). */
export function worstViolation(scores: CategoryScore[]): CategoryScore | null {
  let worst: CategoryScore | null = null;
  for (const score of scores) {
    if (score.score >= score.threshold && (!worst || score.score > worst.score)) worst = score;
  }
  return worst;
}
