// An email address in a log line: enough to tell two apart when reading an incident, never the
// address in clear (an address is personal data, and a log is read by more people than a table).

/** `alice@example.com` → `a***@e***.com`; anything that is not an address → `***`. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return '***';
  const domain = address.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${address[0]}***@${domain[0]}***${tld}`;
}
