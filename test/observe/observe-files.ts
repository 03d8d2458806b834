// The files of deploy/observe as the observe tests read them: the alert rules, their promtool
// tests, the Grafana dashboard's queries, and docs/operations.md's sections.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const OBSERVE = `${ROOT}deploy/observe`;
export const RULE_FILES = ['rules/recording.yml', 'rules/alerts.yml'].map((f) => `${OBSERVE}/${f}`);
export const RULE_TESTS = `${OBSERVE}/tests/alerts.test.yml`;
export const DASHBOARD = `${OBSERVE}/grafana/gateway.json`;
export const OPERATIONS = `${ROOT}docs/operations.md`;

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface RuleFile {
  groups: Array<{ name: string; rules: Array<AlertRule | { record: string; expr: string }> }>;
}

export const readYaml = <T>(file: string): T => parse(readFileSync(file, 'utf8')) as T;

export function alertRules(file = `${OBSERVE}/rules/alerts.yml`): AlertRule[] {
  return readYaml<RuleFile>(file).groups.flatMap((g) => g.rules.filter((r): r is AlertRule => 'alert' in r));
}

export interface RuleTestFile {
  rule_files: string[];
  tests: Array<{ name: string; alert_rule_test?: Array<{ eval_time: string; alertname: string; exp_alerts?: unknown[] }> }>;
}

/** How many promtool cases expect each alert to fire, and how many expect it not to. */
export function alertCases(): Map<string, { fires: number; silent: number }> {
  const cases = new Map<string, { fires: number; silent: number }>();
  for (const test of readYaml<RuleTestFile>(RULE_TESTS).tests) {
    for (const check of test.alert_rule_test ?? []) {
      const counts = cases.get(check.alertname) ?? { fires: 0, silent: 0 };
      if ((check.exp_alerts ?? []).length > 0) counts.fires++;
      else counts.silent++;
      cases.set(check.alertname, counts);
    }
  }
  return cases;
}

/** The heading anchors of a Markdown file, as GitHub makes them. */
export function markdownAnchors(file = OPERATIONS): Map<string, string> {
  const sections = new Map<string, string>();
  const text = readFileSync(file, 'utf8');
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)];
  headings.forEach((match, i) => {
    const slug = match[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const end = headings[i + 1]?.index ?? text.length;
    sections.set(slug, text.slice(match.index!, end));
  });
  return sections;
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string; datasource?: { type: string; uid: string } }>;
}

export interface Dashboard {
  schemaVersion: number;
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query?: string }> };
}

export const dashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

/**
 * Every query of the dashboard, with Grafana's variables put in as Grafana would for a
 * Prometheus scraped every `scrapeSeconds` (its $__rate_interval: four scrape intervals at least).
 */
export function dashboardQueries(scrapeSeconds = 5): Array<{ panel: string; refId: string; expr: string }> {
  const rate = `${4 * scrapeSeconds}s`;
  return dashboard()
    .panels.filter((p) => p.type !== 'row')
    .flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr.replaceAll('$__rate_interval', rate).replaceAll('$__interval', `${scrapeSeconds}s`) })));
}

const run = promisify(execFile);

/** Runs promtool; its output and exit code (a missing promtool is an error that says how to install it). */
export async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: ROOT, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT') throw new Error('promtool is missing: run `make prometheus` (Debian package prometheus, as root)');
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
