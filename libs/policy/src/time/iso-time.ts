/**
 * new Date(ms).toISOString(), remembered: rule details carry the same few instants over and over
 * (a plan's end, the next quota reset), and formatting a date is most of what those rules cost.
 * Invalid instants are not remembered, so they throw exactly as Date does.
 */
const formatted = new Map<number, string>();

export function isoTime(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    // Bounded: a long replay sees many distinct instants; starting afresh is cheap.
    if (formatted.size >= 4096) formatted.clear();
    formatted.set(ms, text);
  }
  return text;
}
