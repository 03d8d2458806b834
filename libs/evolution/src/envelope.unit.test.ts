import { describe, expect, it } from 'vitest';
import { envelopeProblem, withoutBinaryFields } from './envelope.ts';

describe('withoutBinaryFields', () => {
  it('drops media bytes and keeps the rest', () => {
    const stripped = withoutBinaryFields({ event: 'messages.upsert', data: { message: { base64: 'AAAA', imageMessage: { caption: 'hi', jpegThumbnail: 'BBBB' } } } });
    expect(stripped).toEqual({ event: 'messages.upsert', data: { message: { imageMessage: { caption: 'hi' } } } });
  });

  it('keeps a "__proto__" key a key: the copy never takes an attacker object as its prototype', () => {
    const hostile = JSON.parse('{"event":"messages.upsert","data":{"__proto__":{"key":{"remoteJid":"14155553226@s.whatsapp.net","id":"X"}}}}') as Record<string, unknown>;
    const copy = withoutBinaryFields(hostile) as { data: Record<string, unknown> };
    expect(Object.getPrototypeOf(copy.data)).toBe(Object.prototype);
    expect(copy.data.key).toBeUndefined();
    // So the required chat JID is still found missing.
    expect(envelopeProblem(copy)).toBe('data.key.remoteJid is missing');
  });
});
