import { describe, expect, it } from 'vitest';
import { extractHosts } from './content/extract-hosts.ts';
import { normaliseText } from './content/normalise-text.ts';
import { contactShard } from './guard/contacts.ts';
import { canonicalLinkedId } from './linked-ids.ts';
import { quotaWindows } from './time/quota-windows.ts';

// Issue 29 gave the decider's hot helpers shortcuts for the common input (ASCII bodies, bodies
// without links, numbers without '@', instants Date can hold). Each must answer exactly as the
// plain definition it replaced, kept here as the reference.
const reference = {
  normaliseText: (text: string) =>
    text.normalize('NFKC').replace(/[\u200B-\u200D\u2060\uFEFF\u00AD]/g, '').replace(/[\u2018\u2019\u02BC]/g, "'").toLowerCase().replace(/\s+/g, ' ').trim(),
  extractHosts: (text: string) => {
    const host = /(?<![\p{L}\p{N}.@_-])(?:https?:\/\/)?((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\p{L}\p{N}_-])/giu;
    return [...new Set([...text.normalize('NFKC').matchAll(host)].map((m) => m[1]!.toLowerCase()))];
  },
  contactShard: (key: string) => {
    const digits = key.replace(/\D/g, '');
    return digits.length === 0 ? 0 : Number(digits.slice(-2));
  },
  canonicalLinkedId: (value: string) => {
    const lowered = value.trim().toLowerCase();
    return /^[0-9]{1,32}@lid$/.test(lowered) ? lowered : null;
  },
  quotaWindows: (at: number, offsetMinutes: number) => {
    const shift = offsetMinutes * 60_000;
    const local = new Date(at + shift);
    const [year, month, date] = [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
    const pad = (n: number) => String(n).padStart(2, '0');
    return {
      day: `${year}-${pad(month + 1)}-${pad(date)}`,
      dayResetsAt: Date.UTC(year, month, date) + 86_400_000 - shift,
      month: `${year}-${pad(month + 1)}`,
      monthResetsAt: Date.UTC(year, month + 1, 1) - shift,
    };
  },
};

const TEXTS = [
  'Your order 1234 has shipped.', '  Two  spaces\tand a tab\nand a line  ', 'Ｖｏｔｅ for\u200B Jane', 'it\u2019s fine', 'no\u00A0break space',
  'Track it at https://shop.example.com/t/5521', 'see bit.ly/x or T.CO/y', 'e.g. this', 'mail me at a@b.example.com', 'end with a dot.',
  'dot then one letter .a', 'full-width dot bit\uFF0Ely/x', 'one dot leader bit\u2024ly', 'styled \u{1D41B}\u{1D422}\u{1D42D}.ly', 'long s: bit.\u017Fs',
  'kelvin: x.\u212Aa', '', ' ', '\u3000ideographic space\u3000', 'café crème', 'ÀÉÎ ÕÜ', 'a\r\nb', 'x\u2028y',
];

describe('the decider fast paths answer as the plain definitions', () => {
  it('normaliseText and extractHosts, on ASCII and Unicode bodies, with and without links', () => {
    for (const text of TEXTS) {
      expect(normaliseText(text), text).toBe(reference.normaliseText(text));
      expect(extractHosts(text), text).toEqual(reference.extractHosts(text));
    }
  });

  it('contactShard and canonicalLinkedId, on numbers, linked ids and odd keys', () => {
    for (const key of ['+14155550007', '+1', '', 'abc', '123@lid', ' 123@LID ', '12@lid.x', '+44 20 7946 0958', '7', '00', 'x9y8z7', '١٢٣']) {
      expect(contactShard(key), key).toBe(reference.contactShard(key));
      expect(canonicalLinkedId(key), key).toBe(reference.canonicalLinkedId(key));
    }
  });

  it('quotaWindows at day, month and year edges, offsets either side, and instants beyond Date', () => {
    const instants = [0, -1, Date.UTC(2026, 0, 1) - 1, Date.UTC(2024, 1, 29, 23, 59), Date.UTC(2100, 11, 31, 23), 8.64e15, -8.64e15, 8.64e15 + 1, 1.5, Number.NaN];
    for (const at of instants) for (const offset of [0, 330, -300, 840, -720]) expect(quotaWindows(at, offset), `${at} ${offset}`).toEqual(reference.quotaWindows(at, offset));
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      const at = Math.round((seed / 2 ** 32) * 2 * 4e12) - 4e12;
      if (JSON.stringify(quotaWindows(at, 330)) !== JSON.stringify(reference.quotaWindows(at, 330))) expect(quotaWindows(at, 330), String(at)).toEqual(reference.quotaWindows(at, 330));
    }
  });
});
