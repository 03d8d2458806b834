/** Zero-width characters are a common trick to slip words past filters and to vary a body. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u00AD]/g;
const CURLY_QUOTES = /[\u2018\u2019\u02BC]/g;
const ASCII_ONLY = /^[\x00-\x7F]*$/;
const WHITESPACE_RUN = /\s+/g;
/** A run to collapse: two whitespace characters in a row, or one that is not a plain space. */
const COLLAPSIBLE = /\s\s|[^\S ]/;

/**
 * The form both content matching and the bulk digest work on: Unicode NFKC (folds full-width
 * and styled letters), zero-width characters removed, curly apostrophes straightened, lower
 * case, whitespace runs collapsed to one space, trimmed. Digits are kept (see messageDigest).
 * The decider normalises a body once per decision and hands the result to every rule.
 */
export function normaliseText(text: string): string {
  // Most bodies are plain ASCII, where NFKC changes nothing and neither set of characters above
  // occurs: one scan instead of three passes (issue 29: a fixed cost of every decision).
  const folded = ASCII_ONLY.test(text) ? text : text.normalize('NFKC').replace(ZERO_WIDTH, '').replace(CURLY_QUOTES, "'");
  // Likewise most have single spaces only, and the test is a quarter of the replace's cost.
  const lower = folded.toLowerCase();
  return (COLLAPSIBLE.test(lower) ? lower.replace(WHITESPACE_RUN, ' ') : lower).trim();
}
