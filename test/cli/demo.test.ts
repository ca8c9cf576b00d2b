import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDatabaseNotice } from '../../scripts/demoEnv.js';
import { createMigratedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';
import { REPO_ROOT } from './helpers.js';

/** Runs `npm run demo` as an admin would, with this environment; resolves with its output. */
function runDemo(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'demo'], { cwd: REPO_ROOT, env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out, ms: Date.now() - started }));
  });
}

/** Row counts of every table of the database, by name. */
async function rowCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    const counts: Record<string, number> = {};
    for (const { name } of tables.rows) {
      const r = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`);
      counts[name] = r.rows[0]!.n;
    }
    return counts;
  } finally {
    await client.end();
  }
}

describe.skipIf(!TEST_DATABASE_URL)('npm run demo next to a configured production database', () => {
  let target: TestDatabase;
  beforeAll(async () => {
    target = await createMigratedDatabase('postgres');
    // Another deployment's calls, with the sandbox's call ids among them (the collision).
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    await client.query(
      `INSERT INTO sync_status (call_id, crm, state, updated_at)
       SELECT 'call_' || lpad(i::text, 4, '0'), 'hubspot', 'written_back', now() FROM generate_series(1, 40) i`,
    );
    await client.end();
  });
  afterAll(async () => target?.drop(false));

  it('runs on its own data directory, says so, and leaves DATABASE_URL (env and crm-sync.yaml) untouched', async () => {
    const before = await rowCounts(target.url!);
    expect(before.sync_status).toBe(40);
    const configDir = mkdtempSync(path.join(tmpdir(), 'crm-sync-demo-config-'));
    writeFileSync(path.join(configDir, 'crm-sync.yaml'), `DATABASE_URL: ${target.url}\nCRM: salesforce\n`);
    const { code, out } = await runDemo({
      ...process.env,
      DATABASE_URL: target.url,
      CONFIG_DIR: configDir,
      LOG_LEVEL: 'warn',
    });
    expect(out, out).toContain(
      demoDatabaseNotice('./data/demo', [
        'DATABASE_URL (environment)',
        'CONFIG_DIR (environment)',
        `DATABASE_URL (${path.join(configDir, 'crm-sync.yaml')})`,
      ]),
    );
    expect(code, out).toBe(0);
    expect(out).toContain('Done.');
    // The summary says, in words, where each call landed (issue 23 item 12); wrapped lines rejoined.
    const joined = out.replace(/\n {2,}/g, ' ');
    expect(joined).toMatch(
      /^call call_\w+: engagement \d+ on Jane Doe \(contact\), Acme Corp \(company\), Acme - Add-on \(deal\); 2 follow-up drafts$/m,
    );
    expect(joined).toMatch(
      /^call call_\w+: nothing written to the CRM \(skipped: no CRM record matches sam@gmail\.com\)$/m,
    );
    // Globex's deal is not owned by the company's owner: pushed as the owner's email, not "70001".
    expect(out).toMatch(/name: Globex - Platform,[\s\S]{0,200}?owner: olivia\.owner@seller\.example/);
    expect(out).not.toContain('70001');
    expect(out).not.toContain('associations:');
    // Piped, so no terminal styling.
    expect(out).not.toContain('\x1b[');
    expect(await rowCounts(target.url!)).toEqual(before);
  }, 180_000);
});

const oldNode = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).stdout?.startsWith('v20.');

describe.skipIf(!oldNode)("an unsupported Node (the machine's /usr/bin/node, v20)", () => {
  it('crm-sync itself exits 2 with the version message', () => {
    const r = spawnSync('/usr/bin/node', ['bin/crm-sync.js', 'status'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.stderr.trim()).toMatch(
      /^crm-sync needs Node\.js 22\.19 or later \(24 LTS recommended\); this is v20\./,
    );
    expect(r.status).toBe(2);
  });
});

describe.skipIf(!oldNode)('npm run demo on an unsupported Node', () => {
  it('exits at once with the version message (Node 20 from /usr/bin first on PATH)', async () => {
    const { code, out, ms } = await runDemo({
      ...process.env,
      PATH: `/usr/bin:${process.env.PATH ?? ''}`,
    });
    expect(out).toMatch(/crm-sync needs Node\.js 22\.19 or later .*this is v20\./);
    expect(code).toBe(2);
    // The bound (it used to hang forever): a generous ceiling, not a speed target.
    expect(ms).toBeLessThan(5_000);
  });
});
