/**
 * deploy/prometheus/alerts.yml passes `promtool check rules`, every rule has a firing case in
 * `promtool test rules` (alerts.test.yml), and the rules and the Grafana dashboard use only
 * metrics the worker exposes. promtool comes from Debian's prometheus package (.ci/run installs
 * it); without it these checks are skipped locally and fail in CI.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createMetrics } from '../../src/metrics/metrics.js';

const DEPLOY = path.join(import.meta.dirname, '..', '..', 'deploy');
const RULES = path.join(DEPLOY, 'prometheus', 'alerts.yml');
const RULE_TESTS = path.join(DEPLOY, 'prometheus', 'alerts.test.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana', 'crm-sync.json');

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
if (!hasPromtool && process.env.CI) throw new Error('promtool is missing: apt-get install prometheus');

interface RuleFile {
  groups: { rules: { alert: string; expr: string }[] }[];
}
interface RuleTests {
  tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const rules = (parseYaml(readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);

/** Every metric name the worker's registry exposes (default process metrics included). */
async function exposedMetricNames(): Promise<Set<string>> {
  const m = createMetrics();
  const text = await m.render();
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}

/** Metric names in a PromQL expression: identifiers followed by { [ or ), minus functions. */
function metricNamesIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:crmsync|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}

describe('Prometheus alert rules', () => {
  it('covers the six conditions the admin guide promises', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'CrmSyncNoWebhooks',
      'CrmSyncJobFailureRate',
      'CrmSyncBudgetRunsOutToday',
      'CrmSyncCursorStale',
      'CrmSyncCrmCredentialsRejected',
      'CrmSyncDrift',
    ]);
  });

  it('each rule has a unit test in which it fires', () => {
    const cases = (parseYaml(readFileSync(RULE_TESTS, 'utf8')) as RuleTests).tests.flatMap(
      (t) => t.alert_rule_test,
    );
    for (const rule of rules) {
      expect(
        cases.some((c) => c.alertname === rule.alert && c.exp_alerts.length > 0),
        `a firing case for ${rule.alert}`,
      ).toBe(true);
    }
  });

  it('uses only metrics the worker exposes', async () => {
    const exposed = await exposedMetricNames();
    for (const rule of rules)
      for (const name of metricNamesIn(rule.expr)) expect(exposed, rule.alert).toContain(name);
  });

  it.skipIf(!hasPromtool)('passes promtool check rules', () => {
    const out = execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it.skipIf(!hasPromtool)('passes its unit tests (promtool test rules)', () => {
    const run = spawnSync('promtool', ['test', 'rules', RULE_TESTS], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });
});

describe('Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };

  it('queries only metrics the worker exposes, in every panel', async () => {
    const exposed = await exposedMetricNames();
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels) {
      const names = panel.targets.flatMap((t) => metricNamesIn(t.expr));
      expect(names.length, panel.title).toBeGreaterThan(0);
      for (const name of names) expect(exposed, panel.title).toContain(name);
    }
  });
});
