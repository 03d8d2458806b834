// Writing SVG (and the bits of HTML around a chart) as text: every piece of text that goes in is
// escaped here, so a label can never open an element or an attribute.

/** Text or an attribute value, escaped for XML and HTML alike. */
export function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A coordinate, short: at most one decimal. */
export const px = (n: number): string => String(Math.round(n * 10) / 10);

/** An element with attributes (escaped) and, unless self-closing, content that is already markup. */
export function element(name: string, attributes: Record<string, string | number | null | undefined>, content?: string): string {
  const attrs = Object.entries(attributes)
    .filter((entry): entry is [string, string | number] => entry[1] !== null && entry[1] !== undefined)
    .map(([key, value]) => ` ${key}="${escapeXml(typeof value === 'number' ? px(value) : value)}"`)
    .join('');
  return content === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${content}</${name}>`;
}
