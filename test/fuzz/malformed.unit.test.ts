import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { envelopeProblem } from '@gw/evolution';
import { malformedRequests, type FuzzTargets } from './malformed.ts';

const targets: FuzzTargets = {
  instanceId: 'ins_0123456789abcdef01234567',
  instanceName: 'demo-abc123',
  managerInstance: 'demo-abc123-mgr',
  apiKey: `gw_0123456789abcdef_${'A'.repeat(43)}`,
  revokedApiKey: `gw_fedcba9876543210_${'B'.repeat(43)}`,
  pbxIntegrationId: 7,
  pbxSecret: `pbx_${'C'.repeat(43)}`,
  pbxSigningSecret: `pbxsig_${'D'.repeat(43)}`,
  otherPbxIntegrationId: 6,
  ingestToken: 'E'.repeat(43),
};

const digest = (seed: number, total: number) => {
  const hash = createHash('sha256');
  for (const r of malformedRequests(targets, { seed, total })) hash.update(`${r.endpoint} ${r.family} ${r.path} ${JSON.stringify(r.headers)} ${JSON.stringify(r.expect)}`).update(r.body);
  return hash.digest('hex');
};

describe('the malformed-request generator', () => {
  it('is reproducible from its seed, and another seed gives other requests', () => {
    expect(digest(42, 500)).toBe(digest(42, 500));
    expect(digest(43, 500)).not.toBe(digest(42, 500));
  });

  it('gives only requests it has checked are refused, labelled 4xx, mostly authenticated, across every family', () => {
    const families = new Map<string, number>();
    let authenticated = 0;
    let total = 0;
    // Every request is checked as it is drawn (the generator throws on one the gateway would accept).
    for (const r of malformedRequests(targets, { seed: 7, total: 6000 })) {
      total++;
      if (r.authenticated) authenticated++;
      families.set(`${r.endpoint} ${r.family}`, (families.get(`${r.endpoint} ${r.family}`) ?? 0) + 1);
      if (r.expect.status !== undefined) expect(r.expect.status).toBeGreaterThanOrEqual(400);
      if (r.expect.status !== undefined) expect(r.expect.status).toBeLessThan(500);
      for (const m of r.markers) expect(m.length).toBeGreaterThanOrEqual(8);
    }
    expect(authenticated / total).toBeGreaterThan(0.9);
    for (const name of ['send json.truncated', 'send proto.keys', 'send content_type.wrong', 'send size.over_limit', 'pbx semantic.outbound_missing_to', 'pbx nesting.deep', 'pbx auth.stale_timestamp', 'ingest jid.bad', 'ingest size.over_limit', 'ingest auth.wrong_token']) {
      expect(families.get(name), name).toBeGreaterThan(0);
    }
  });
});

describe('envelopeProblem', () => {
  it('refuses an envelope nested deeper than the limit instead of overflowing the stack', () => {
    const deep = JSON.parse(`{"event":"presence.update","data":${'['.repeat(200_000)}0${']'.repeat(200_000)}}`);
    expect(envelopeProblem(deep)).toMatch(/nested deeper than/);
  });

  it('treats an event named after an Object.prototype property as an event without JID fields', () => {
    for (const event of ['constructor', 'CONSTRUCTOR', 'hasOwnProperty', 'toString', '__proto__']) {
      expect(envelopeProblem({ event, data: { key: { remoteJid: '14155550123@s.whatsapp.net' } } }), event).toBeNull();
      expect(envelopeProblem({ event, data: [{ from: 'x' }, 1] }), event).toBeNull();
    }
  });
});
