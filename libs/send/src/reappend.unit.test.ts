import { describe, expect, it } from 'vitest';
import { appendRule } from './reappend.ts';

// The one re-append rule of the send path (POST /api/send-message, PBX, dashboard test sends).
describe('appendRule', () => {
  const reappendAfterMs = 30_000;

  it('given a new claim, when deciding, then the command is appended', () => {
    expect(appendRule({ kind: 'new' }, reappendAfterMs)).toBe('append');
  });

  it('given a retry younger than the re-append age (its first append may still be on its way), when deciding, then nothing is appended', () => {
    expect(appendRule({ kind: 'replay', ageMs: 0 }, reappendAfterMs)).toBe('skip');
    expect(appendRule({ kind: 'replay', ageMs: reappendAfterMs }, reappendAfterMs)).toBe('skip');
  });

  it('given a retry older than the re-append age, when deciding, then it is appended again only if still undecided', () => {
    expect(appendRule({ kind: 'replay', ageMs: reappendAfterMs + 1 }, reappendAfterMs)).toBe('append-if-undecided');
  });

  it('given a re-append age of zero, when a retry comes at once, then it is already old enough', () => {
    expect(appendRule({ kind: 'replay', ageMs: 1 }, 0)).toBe('append-if-undecided');
  });
});
