/** Zero-width characters are a common trick to slip words past filters and to vary a body. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u00AD]/g;
const CURLY_QUOTES = /[\u2018\u2019\u02BC]/g;
/** Printable ASCII only: NFKC leaves it as it is and it holds no zero-width or curly characters. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ASCII = /^[\x00-\x7f]*$/;

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

/** Whether a string holds ASCII characters only (every regex of the content rules reads it alike with or without the u flag). */
export const isAscii = (text: string): boolean => ASCII.test(text);

function normalise(text: string): string {
  // Most bodies are printable ASCII: NFKC and both replacements would change nothing, and the only
  // whitespace is the plain space. Same result as the general path, a fraction of the work.
  if (PRINTABLE_ASCII.test(text)) {
    const lower = text.toLowerCase();
    if (lower.includes('  ')) return lower.replace(/ +/g, ' ').trim();
    return lower.charCodeAt(0) === 32 || lower.charCodeAt(lower.length - 1) === 32 ? lower.trim() : lower;
  }
  return normaliseSlow(text);
}

/** The general path (any Unicode text); also the reference the fast path is tested against. */
export function normaliseSlow(text: string): string {
  return text
    .normalize('NFKC')
    .replace(ZERO_WIDTH, '')
    .replace(CURLY_QUOTES, "'")
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}
