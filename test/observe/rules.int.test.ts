import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { alertCases, alertRules, dashboardQueries, markdownAnchors, OBSERVE, promtool, readYaml, RULE_FILES, RULE_TESTS, type RuleTestFile } from './observe-files.ts';

// The alert and recording rules of deploy/observe, through Debian's promtool (make prometheus):
// they load, their unit tests pass, every alert has its runbook section and cases that fire it
// and cases that must not, and those cases test the rule's own expression.
const scratch = mkdtempSync(`${tmpdir()}/gw-rules-`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the Prometheus rules', () => {
  it('load: promtool check rules, and the Prometheus config with them', async () => {
    const rules = await promtool('check', 'rules', ...RULE_FILES);
    expect(rules.code, rules.output).toBe(0);
    const config = await promtool('check', 'config', `${OBSERVE}/prometheus.yml`);
    expect(config.code, config.output).toBe(0);
    expect(config.output).toContain(`SUCCESS: ${RULE_FILES.length} rule files found`);
  });

  it('pass their unit tests: promtool test rules', async () => {
    const tests = await promtool('test', 'rules', RULE_TESTS);
    expect(tests.code, tests.output).toBe(0);
    expect(tests.output).toContain('SUCCESS');
  });

  it('each alert has a severity, a summary, a description and a runbook section of docs/operations.md saying what it means, how to confirm it and what to do', () => {
    const sections = markdownAnchors();
    const alerts = alertRules();
    expect(alerts.length).toBeGreaterThanOrEqual(7);
    for (const rule of alerts) {
      expect(rule.labels?.severity, rule.alert).toMatch(/^(warning|critical)$/);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
      const url = rule.annotations?.runbook_url ?? '';
      expect(url, rule.alert).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      const section = sections.get(url.split('#')[1]!);
      expect(section, `docs/operations.md has no section for ${rule.alert}`).toBeDefined();
      for (const part of ['Means', 'Confirm', 'Do']) expect(section, `${rule.alert}: ${part}`).toContain(`**${part}**`);
    }
  });

  it('each alert has promtool cases that fire it and cases that must not', () => {
    const cases = alertCases();
    for (const { alert } of alertRules()) {
      expect(cases.get(alert)?.fires ?? 0, `${alert}: a case that fires it`).toBeGreaterThan(0);
      expect(cases.get(alert)?.silent ?? 0, `${alert}: a case that must not fire`).toBeGreaterThan(0);
    }
  });

  it("each alert's firing cases depend on its expression: the tests fail once it can no longer fire", async () => {
    const tests = readYaml<RuleTestFile>(RULE_TESTS);
    /** The rules with one alert's expression replaced by one that never fires, and the tests pointed at them. */
    const withNeverFiring = (alert: string) => {
      const dir = mkdtempSync(`${scratch}/never-${alert}-`);
      cpSync(`${OBSERVE}/rules`, `${dir}/rules`, { recursive: true });
      const file = readYaml<{ groups: Array<{ rules: Array<{ alert?: string; expr: string }> }> }>(`${dir}/rules/alerts.yml`);
      for (const group of file.groups) for (const rule of group.rules) if (rule.alert === alert) rule.expr = 'vector(1) < 0';
      writeFileSync(`${dir}/rules/alerts.yml`, stringify(file));
      writeFileSync(`${dir}/tests.yml`, stringify({ ...tests, rule_files: ['rules/recording.yml', 'rules/alerts.yml'] }));
      return `${dir}/tests.yml`;
    };
    const alerts = alertRules().map((r) => r.alert);
    // Two promtool runs at a time: one per core.
    for (let i = 0; i < alerts.length; i += 2) {
      await Promise.all(
        alerts.slice(i, i + 2).map(async (alert) => {
          const result = await promtool('test', 'rules', withNeverFiring(alert));
          expect(result.code, `${alert} never firing still passes its tests`).not.toBe(0);
          expect(result.output).toContain(`alertname: ${alert}`);
        }),
      );
    }
  });

  it("the dashboard's queries are valid PromQL (recorded in a scratch rule file and checked)", async () => {
    const queries = dashboardQueries();
    const file = `${scratch}/dashboard-queries.yml`;
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) }] }));
    const check = await promtool('check', 'rules', file);
    expect(check.code, check.output).toBe(0);
    expect(check.output).toContain(`SUCCESS: ${queries.length} rules found`);
  });
});
