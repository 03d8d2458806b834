import type { ContentRules } from '../config/content-rules.ts';
import { normaliseText } from './normalise-text.ts';

export interface CategoryScore {
  reason: string;
  score: number;
  threshold: number;
  matched: string[];
}

interface CompiledCategory {
  reason: string;
  patterns: { id: string; regex: RegExp; weight: number }[];
}

// Compiling is a pure function of the rules object; caching it only saves time.
const compiled = new WeakMap<ContentRules, CompiledCategory[]>();

function compile(rules: ContentRules): CompiledCategory[] {
  let result = compiled.get(rules);
  if (!result) {
    result = rules.categories.map((category) => ({
      reason: category.reason,
      patterns: category.patterns.map((p) => ({ id: p.id, regex: new RegExp(p.source, 'iu'), weight: p.weight })),
    }));
    compiled.set(rules, result);
  }
  return result;
}

/**
 * Scores every category; each distinct matching pattern counts once, so repeating a weak word does
 * not add up. Returns only categories with at least one match, in the rules' order.
 */
export function scoreContent(text: string, rules: ContentRules, thresholds: Readonly<Record<string, number>> = {}): CategoryScore[] {
  const normalised = normaliseText(text);
  const scores: CategoryScore[] = [];
  for (const category of compile(rules)) {
    const matched = category.patterns.filter((p) => p.regex.test(normalised));
    if (matched.length === 0) continue;
    scores.push({
      reason: category.reason,
      score: matched.reduce((sum, p) => sum + p.weight, 0),
      threshold: thresholds[category.reason] ?? rules.defaultThreshold,
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
