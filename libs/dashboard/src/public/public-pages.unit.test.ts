import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { createMetrics } from '@gw/observability';
import { createPolicy, DEFAULT_POLICY_CONFIG, describeRules, RULES, type PolicyConfig } from '@gw/policy';
import { buildApp } from '../../../../services/api/src/app.ts';
import type { PbxDeps } from '../../../../services/api/src/pbx/route.ts';
import type { SendMessageDeps } from '../../../../services/api/src/send-message/route.ts';
import { unconnectedDashboard } from '../unconnected.ts';
import { messagingRules, publicPolicyPages, type MessagingRules } from '../messaging-rules.ts';

// The public pages are built from the policy the engine decides with: no database, no session,
// so the app is built unconnected (as app.unit.test.ts does) and asked without a cookie.
const apps: FastifyInstance[] = [];

async function appWith(messaging?: MessagingRules): Promise<FastifyInstance> {
  const dashboard = unconnectedDashboard();
  const app = await buildApp({
    logger: false,
    metrics: createMetrics('public-pages-unit', false),
    readiness: { check: () => [] },
    publicBaseUrl: 'https://gateway.test',
    bodyLimitBytes: 1024,
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    send: {} as SendMessageDeps,
    pbx: {} as PbxDeps,
    dashboard: messaging ? { ...dashboard, messaging } : dashboard,
  });
  await app.ready();
  apps.push(app);
  return app;
}

const html = async (app: FastifyInstance, url: string) => {
  const response = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
  expect(response.statusCode, url).toBe(200);
  return response.body;
};

/** The default configuration with one threshold of each kind changed. */
function changedConfig(): PolicyConfig {
  const starter = DEFAULT_POLICY_CONFIG.plans.starter!;
  return {
    ...DEFAULT_POLICY_CONFIG,
    version: 'test-changed',
    plans: {
      ...DEFAULT_POLICY_CONFIG.plans,
      starter: { ...starter, dailyLimit: 173, velocity: { ...starter.velocity, burst: 17 }, bulk: { ...starter.bulk, maxDistinctRecipients: 37 }, contentThresholds: { shaft_alcohol: 1 } },
    },
    autoPause: { ...DEFAULT_POLICY_CONFIG.autoPause, optOutRate: { threshold: 0.07, minVolume: 41 } },
    urlShorteners: [...DEFAULT_POLICY_CONFIG.urlShorteners, 'short.example'],
  };
}

let app: FastifyInstance;
beforeAll(async () => {
  app = await appWith();
});

afterAll(async () => {
  for (const a of apps) await a.close();
});

describe('GET /acceptable-use and GET /docs/responsible-messaging', () => {
  it('are public: no sign-in, the strict headers, no script', async () => {
    for (const url of ['/acceptable-use', '/docs/responsible-messaging']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      expect(response.body).not.toMatch(/<script/);
      expect(response.body).toContain('href="/sign-in"');
    }
  });

  it('acceptable use: the five purposes allowed, what is prohibited, what a breach brings', async () => {
    const page = await html(app, '/acceptable-use');
    for (const purpose of ['transactional', 'operational', 'support', 'internal_team', 'authentication']) expect(page).toContain(`<code>${purpose}</code>`);
    for (const words of ['Marketing, in any form', 'Cold outreach', 'Political messaging', 'Bulk campaigns']) expect(page).toContain(words);
    for (const category of DEFAULT_POLICY_CONFIG.content.categories) expect(page).toContain(`<code>${category.reason}</code>`);
    for (const rule of describeRules()) expect(page).toContain(`<code>${rule.code}</code>`);
    expect(page).toContain('paused for review');
    expect(page).toContain('20 within 1 hour (Starter), 50 within 1 hour (Growth), 100 within 1 hour (Scale)');
    expect(page).toContain('<code>STOP</code>');
  });

  it('responsible messaging: every rule with its code, status and per-plan thresholds; keywords; the policy log', async () => {
    const page = await html(app, '/docs/responsible-messaging');
    for (const rule of describeRules()) {
      expect(page).toContain(`id="rule-${rule.name}"`);
      expect(page).toContain(`<td><code>${rule.code}</code> <span class="hint">(${rule.status})</span></td>`);
    }
    expect(page).toContain(createPolicy().version);
    expect(page).toMatch(/<tr><td>Starter<\/td><td>100<\/td><td>UTC<\/td><\/tr>/);
    expect(page).toMatch(/<tr><td>Scale<\/td><td>20,000<\/td><td>UTC<\/td><\/tr>/);
    expect(page).toMatch(/<tr><td>Growth<\/td><td>30<\/td><td>30<\/td><td>6 seconds<\/td><\/tr>/);
    expect(page).toMatch(/<tr><td>shaft_alcohol<\/td><td>2<\/td><td>2<\/td><td>2<\/td><\/tr>/);
    for (const keyword of loadConfig({}).instanceEvents.optOutKeywords) expect(page).toContain(`<code>${keyword}</code>`);
    for (const keyword of loadConfig({}).instanceEvents.optInKeywords) expect(page).toContain(`<code>${keyword}</code>`);
    expect(page).toContain('id="policy-log"');
    expect(page).toContain('members with the owner, admin or compliance role may read it');
    expect(page).toContain('bit.ly, bitly.com');
  });

  it('shows every code the engine can refuse with, as its rules are written', async () => {
    const page = await html(app, '/docs/responsible-messaging');
    // The codes the rules declare, and every code a rule's source fails with (a rule may fail with another than its own).
    const declared = RULES.map((r) => r.code);
    const dir = new URL('../../../../libs/policy/src/rules/', import.meta.url);
    const written = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.includes('.test.'))
      .flatMap((f) => [...readFileSync(new URL(f, dir), 'utf8').matchAll(/(?:fail\(\w+, |code: |quotaRule\('\w+', '\w+', )'([a-z_]+)'/g)].map((m) => m[1]!));
    expect(written.length).toBeGreaterThanOrEqual(declared.length);
    for (const code of new Set([...declared, ...written])) expect(page, code).toContain(`<code>${code}</code>`);
    // And every reason a policy_violation names.
    for (const reason of [...DEFAULT_POLICY_CONFIG.content.categories.map((c) => c.reason)]) expect(page).toContain(`<code>${reason}</code>`);
  });
});

describe('built from the policy configuration', () => {
  it('a threshold changed in the configuration changes the page data', () => {
    const keywords = loadConfig({});
    const before = publicPolicyPages(messagingRules(keywords));
    const after = publicPolicyPages(messagingRules(keywords, createPolicy(changedConfig())));
    expect(before.plans.find((p) => p.id === 'starter')).toMatchObject({ daily: '100', burst: '10', bulk: '20' });
    expect(after.plans.find((p) => p.id === 'starter')).toMatchObject({ daily: '173', burst: '17', bulk: '37' });
    expect(after.autoPause.signals.find((s) => s.id === 'opt_out_rate')).toEqual({ id: 'opt_out_rate', label: expect.any(String), threshold: '7 %', minVolume: '41' });
    expect(after.version).not.toBe(before.version);
    // The rest is as before.
    expect(after.plans.filter((p) => p.id !== 'starter')).toEqual(before.plans.filter((p) => p.id !== 'starter'));
  });

  it('and the pages themselves, with the keywords configured', async () => {
    const changed = await appWith(messagingRules({ instanceEvents: { ...loadConfig({}).instanceEvents, optOutKeywords: ['ARRET'], optInKeywords: ['REPRENDRE'] } }, createPolicy(changedConfig())));
    const [beforeDocs, afterDocs] = [await html(app, '/docs/responsible-messaging'), await html(changed, '/docs/responsible-messaging')];
    expect(beforeDocs).toMatch(/<tr><td>Starter<\/td><td>100<\/td>/);
    expect(afterDocs).toMatch(/<tr><td>Starter<\/td><td>173<\/td>/);
    expect(afterDocs).toMatch(/<tr><td>Starter<\/td><td>17<\/td><td>10<\/td>/);
    expect(afterDocs).toMatch(/<td><code>opt_out_rate<\/code><\/td><td>[^<]+<\/td><td>7 %<\/td><td>41<\/td>/);
    expect(afterDocs).toMatch(/<tr><td>shaft_alcohol<\/td><td>1<\/td><td>2<\/td><td>2<\/td><\/tr>/);
    expect(afterDocs).toContain('short.example');
    expect(afterDocs).toContain('<code>ARRET</code>');
    expect(afterDocs).not.toContain('<code>STOP</code>');
    expect(afterDocs).toContain('test-changed');
    const afterUse = await html(changed, '/acceptable-use');
    expect(afterUse).toContain('37 within 1 hour (Starter)');
    expect(afterUse).toContain('<td>Starter</td><td>5 USD per 30 days</td><td>173</td>');
  });
});
