/** Zero-width characters are a common trick to slip words past filters and to vary a body. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u00AD]/g;
const CURLY_QUOTES = /[\u2018\u2019\u02BC]/g;

/**
 * The form both content matching and the bulk digest work on: Unicode NFKC (folds full-width
 * and styled letters), zero-width characters removed, curly apostrophes straightened, lower
 * case, whitespace runs collapsed to one space, trimmed. Digits are kept (see messageDigest).
 * The decider normalises a body once per decision and hands the result to every rule.
 */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(ZERO_WIDTH, '')
    .replace(CURLY_QUOTES, "'")
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}
