// CSV as the exports write it (gatewayctl's policy-log export, the dashboard's downloads): RFC 4180
// with CRLF line ends, one definition for every file a customer or an operator opens.

/** RFC 4180: quote a field holding a comma, quote, CR or LF (or edge spaces), doubling inner quotes. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV line, CRLF included. */
export const csvLine = (values: readonly unknown[]): string => `${values.map(csvField).join(',')}\r\n`;
