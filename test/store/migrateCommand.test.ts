import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/store/migrations.js';
import { readdirSync } from 'node:fs';
import { createEmptyDatabase, createMigratedDatabase, TEST_DATABASE_URL } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIGRATIONS = readdirSync(MIGRATIONS_DIR).filter((n) => !n.endsWith('.toml'));

async function crmSync(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', CONFIG_DIR: '/nonexistent', LOG_LEVEL: 'warn', ...env },
    },
  );
  return stdout;
}

describe('crm-sync migrate', () => {
  it('reports an up-to-date embedded database, and its status', async () => {
    const target = await createMigratedDatabase('embedded');
    try {
      expect(await crmSync(['migrate'], { DATA_DIR: target.dataDir })).toBe(
        `The embedded database at ${target.dataDir} is up to date; no migration to apply.\n`,
      );
      const status = await crmSync(['migrate', '--status'], { DATA_DIR: target.dataDir });
      expect(status).toContain('pending: none');
      // What is applied is shown too, not only what is pending.
      const names = readdirSync(MIGRATIONS_DIR)
        .filter((f) => /^\d/.test(f))
        .sort();
      expect(status).toContain(`applied: ${names.length}\n${names.map((n) => `    ${n}`).join('\n')}\n`);
    } finally {
      await target.drop(false);
    }
    // Two child processes that each open the embedded database: seconds apiece on a loaded machine.
  }, 120_000);

  it.runIf(TEST_DATABASE_URL)(
    'prints the migrations it applied to PostgreSQL, without the password',
    async () => {
      const target = await createEmptyDatabase('postgres');
      try {
        const url = new URL(target.url!);
        url.password = 'secret-pw';
        const out = await crmSync(['migrate'], { DATABASE_URL: url.toString(), DATA_DIR: target.dataDir });
        expect(out).toContain(`Applied ${MIGRATIONS.length} migration(s) to the PostgreSQL database at`);
        for (const name of MIGRATIONS) expect(out).toContain(`  ${name}`);
        expect(out).not.toContain('secret-pw');
      } finally {
        await target.drop(false);
      }
    },
  );
});
