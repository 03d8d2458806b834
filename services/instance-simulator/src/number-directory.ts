/**
 * Stands in for WhatsApp's onWhatsApp lookup: which numbers have an account.
 * A number is unknown when it (as sent, or reduced to digits) starts with a configured prefix.
 */
export class NumberDirectory {
  constructor(private readonly unknownPrefixes: string[]) {}

  exists(rawNumber: string): boolean {
    const trimmed = rawNumber.trim();
    const digits = trimmed.replace(/\D/g, '');
    return !this.unknownPrefixes.some(
      (prefix) => prefix.length > 0 && (trimmed.startsWith(prefix) || digits.startsWith(prefix)),
    );
  }
}
