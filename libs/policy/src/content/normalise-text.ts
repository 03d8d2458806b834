/** Zero-width characters are a common trick to slip words past filters and to vary a body. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u00AD]/g;
const CURLY_QUOTES = /[\u2018\u2019\u02BC]/g;

/** The last body normalised and its result (see normaliseText). */
let last = { text: '', normalised: '' };

/**
 * The form both content matching and the bulk digest work on: Unicode NFKC (folds full-width
 * and styled letters), zero-width characters removed, curly apostrophes straightened, lower
 * case, whitespace runs collapsed to one space, trimmed. Digits are kept (see messageDigest).
 */
export function normaliseText(text: string): string {
  // The decider normalises one body several times in a row (digest, content scoring, the log
  // entry); remembering the last answer makes the repeats free. A pure function, so a cache is safe.
  if (text === last.text) return last.normalised;
  const normalised = normalise(text);
  last = { text, normalised };
  return normalised;
}

function normalise(text: string): string {
  return text
    .normalize('NFKC')
    .replace(ZERO_WIDTH, '')
    .replace(CURLY_QUOTES, "'")
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}
