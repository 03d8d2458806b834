import type { ContentRules } from '../config/content-rules.ts';
import { isAscii, normaliseText } from './normalise-text.ts';

export interface CategoryScore {
  reason: string;
  score: number;
  threshold: number;
  matched: string[];
}

interface CompiledPattern {
  id: string;
  /** As the rules say: case-insensitive with Unicode semantics. */
  regex: RegExp;
  /** The same source without the u flag, for ASCII text only (see compile); null when not equivalent. */
  ascii: RegExp | null;
  weight: number;
}

interface CompiledCategory {
  reason: string;
  patterns: CompiledPattern[];
}

interface Compiled {
  categories: CompiledCategory[];
  /** Every pattern in one alternation (without the u flag), or null: matches ASCII text exactly when one of them does. */
  anyAscii: RegExp | null;
}

// Compiling is a pure function of the rules object; caching it only saves time.
const compiled = new WeakMap<ContentRules, Compiled>();

/**
 * On a subject of ASCII characters only, a pattern written in ASCII means the same with and
 * without the u flag, unless it uses syntax that only the u flag gives a meaning to (\p{..},
 * \u{..}, named back references, control escapes). Case-insensitive matching then pairs the
 * same ASCII letters either way, and \w, \b, \d and \s select the same ASCII characters. Without
 * the u flag V8 matches case-insensitively many times faster, and an alternation of every
 * pattern rules out a typical transactional text in one scan.
 */
function asciiSource(source: string): boolean {
  return isAscii(source) && !/\\[pPuck]/.test(source);
}

function compile(rules: ContentRules): Compiled {
  let result = compiled.get(rules);
  if (!result) {
    const categories = rules.categories.map((category) => ({
      reason: category.reason,
      patterns: category.patterns.map((p) => ({ id: p.id, regex: new RegExp(p.source, 'iu'), ascii: asciiSource(p.source) ? new RegExp(p.source, 'i') : null, weight: p.weight })),
    }));
    const sources = rules.categories.flatMap((c) => c.patterns.map((p) => p.source));
    // One alternation is only the "any of them" question when groups keep their meaning: no back references.
    const combinable = sources.length > 0 && sources.every((s) => asciiSource(s) && !/\\[1-9]/.test(s));
    result = { categories, anyAscii: combinable ? new RegExp(sources.map((s) => `(?:${s})`).join('|'), 'i') : null };
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
  const { categories, anyAscii } = compile(rules);
  const ascii = isAscii(normalised);
  if (ascii && anyAscii && !anyAscii.test(normalised)) return [];
  const scores: CategoryScore[] = [];
  for (const category of categories) {
    const matched = category.patterns.filter((p) => (ascii && p.ascii ? p.ascii : p.regex).test(normalised));
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
