/**
 * `npm run chaos`: runs the chaos scenarios (the real worker as separate processes against the
 * sandboxes, under kills, storms, outages, replicas and hostile input) and prints one table row per
 * scenario. Not part of `npm test`: it takes about ten minutes. See docs/reliability.md.
 *
 *   npm run chaos                                  # every scenario, a random seed (printed)
 *   npm run chaos -- --scenario kill9-pg           # one scenario (repeat the flag or use a comma list)
 *   npm run chaos -- --seed 1234                   # repeat a run; several --seed flags run it per seed
 *   npm run chaos -- --list                        # names and descriptions
 *
 * Exits 1 when any scenario fails. The table also goes to chaos/last-run.md, and every child
 * process's output to chaos/runs/<time>-seed<N>/ (kept for inspection).
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { hashString, seededRandom } from '@crm-sync/sandboxes/service/rng';
import { killAllChildren } from './lib/processes.js';
import { SecretRegistry } from './lib/secrets.js';
import { CHAOS_DIR, markdownTable, type Row } from './lib/report.js';
import type { Scenario, ScenarioResult } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';

/** Time a scenario gets after its budget to stop its processes before the runner moves on. */
const CLEANUP_GRACE_MS = 30_000;

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', multiple: true },
    seed: { type: 'string', multiple: true },
    list: { type: 'boolean' },
  },
});

if (values.list) {
  for (const s of SCENARIOS)
    console.log(`${s.name.padEnd(18)} ${Math.round(s.budgetMs / 1000)} s  ${s.description}`);
  process.exit(0);
}

const wanted = (values.scenario ?? [])
  .flatMap((v) => v.split(','))
  .map((v) => v.trim())
  .filter(Boolean);
const unknown = wanted.filter((name) => !SCENARIOS.some((s) => s.name === name));
if (unknown.length > 0) {
  console.error(
    `unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`,
  );
  process.exit(2);
}
// Registry order, not command-line order: the secrets scan must come last.
const chosen = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name));
const seeds = (values.seed ?? [String(randomInt(1, 2 ** 31))]).map((s) => {
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`--seed must be a non-negative integer, not ${s}`);
    process.exit(2);
  }
  return n;
});

process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});

async function runOne(
  scenario: Scenario,
  seed: number,
  runDir: string,
  secrets: SecretRegistry,
): Promise<Row> {
  const dir = path.join(runDir, scenario.name);
  mkdirSync(dir, { recursive: true });
  const controller = new AbortController();
  const started = Date.now();
  const log = (message: string) =>
    console.error(
      `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${scenario.name}: ${message}`,
    );
  log(`start (budget ${Math.round(scenario.budgetMs / 1000)} s)`);
  const budget = setTimeout(() => controller.abort(new Error('budget spent')), scenario.budgetMs);
  const work = scenario
    .run({
      seed,
      random: seededRandom(seed ^ hashString(scenario.name)),
      dir,
      runDir,
      secrets,
      signal: controller.signal,
      log,
    })
    .catch((err: unknown): ScenarioResult => ({
      pass: false,
      figures: {},
      failures: [`crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`],
    }));
  let hardStop: NodeJS.Timeout | undefined;
  const overrun = new Promise<ScenarioResult>((resolve) => {
    hardStop = setTimeout(
      () =>
        resolve({
          pass: false,
          figures: {},
          failures: ['did not stop within its budget plus the grace period'],
        }),
      scenario.budgetMs + CLEANUP_GRACE_MS,
    );
  });
  const result = await Promise.race([work, overrun]);
  clearTimeout(budget);
  clearTimeout(hardStop);
  const seconds = (Date.now() - started) / 1000;
  if (seconds * 1000 > scenario.budgetMs && result.pass) {
    result.pass = false;
    result.failures.push(`took ${seconds.toFixed(0)} s, over its ${scenario.budgetMs / 1000} s budget`);
  }
  killAllChildren();
  log(`${result.pass ? 'PASS' : 'FAIL'} in ${seconds.toFixed(1)} s`);
  for (const f of result.failures) log(`  - ${f}`);
  return { name: scenario.name, seconds, ...result };
}

let failed = false;
const reports: string[] = [];
for (const seed of seeds) {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const runDir = path.join(CHAOS_DIR, 'runs', `${stamp}-seed${seed}`);
  mkdirSync(runDir, { recursive: true });
  console.log(
    `chaos: seed ${seed}, ${chosen.length} scenario(s), logs in ${path.relative(process.cwd(), runDir)}`,
  );
  const secrets = new SecretRegistry();
  const rows: Row[] = [];
  for (const scenario of chosen) rows.push(await runOne(scenario, seed, runDir, secrets));
  const table = markdownTable(rows);
  const failures = rows.flatMap((r) => r.failures.map((f) => `- ${r.name}: ${f.split('\n')[0]}`));
  const report = [
    `Seed ${seed}, ${new Date().toISOString()}, node ${process.version}`,
    '',
    table,
    ...(failures.length > 0 ? ['', 'Failures:', ...failures] : []),
  ].join('\n');
  console.log(`\n${report}\n`);
  writeFileSync(path.join(runDir, 'table.md'), `${report}\n`);
  reports.push(report);
  if (rows.some((r) => !r.pass)) failed = true;
}
writeFileSync(path.join(CHAOS_DIR, 'last-run.md'), `${reports.join('\n\n')}\n`);
process.exit(failed ? 1 : 0);
