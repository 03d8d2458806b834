/**
 * Host names that appear in a text, with or without a scheme ("bit.ly/x", "https://t.co/y").
 * A host needs a letter-only top-level label of 2+ letters and must not be glued to a preceding
 * word, dot or '@' (so e-mail addresses and "e.g." are not read as links).
 */
const HOST = /(?<![\p{L}\p{N}.@_-])(?:https?:\/\/)?((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\p{L}\p{N}_-])/giu;
/**
 * What every HOST match contains (a dot, then the two first letters of the top-level label), with
 * the same flags. Most bodies have none ("... arrives tomorrow."), and this one-step scan clears
 * them before the costlier HOST scan with its look-arounds runs (issue 29).
 */
const DOT_AND_LETTERS = /\.[a-z]{2}/iu;

export function extractHosts(text: string): string[] {
  const folded = text.normalize('NFKC');
  if (!DOT_AND_LETTERS.test(folded)) return [];
  const hosts = new Set<string>();
  for (const match of folded.matchAll(HOST)) {
    if (match[1]) hosts.add(match[1].toLowerCase());
  }
  return [...hosts];
}

/** The shortener a host belongs to (exact domain or a subdomain of it), or null. */
export function shortenerOf(host: string, shorteners: readonly string[]): string | null {
  return shorteners.find((domain) => host === domain || host.endsWith(`.${domain}`)) ?? null;
}
