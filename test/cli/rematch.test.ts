import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRematch, formatRematchProgress } from '../../src/cli/rematchFormat.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createMigratedDatabase, openTestDatabase, type TestDatabase } from '../store/helpers.js';
import { crmSync, hubspotEnv } from './helpers.js';

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let empty: TestDatabase;
let seeded: TestDatabase;
/** The CLI opens and migrates an embedded database: slow on a loaded machine. */
const DB_COMMAND_MS = 90_000;

beforeAll(async () => {
  [svc, hs] = await Promise.all([startServiceSandbox(), startHubSpotSandbox()]);
  // Copies of a migrated embedded database: no initdb in the CLI's time.
  [empty, seeded] = await Promise.all([
    createMigratedDatabase('embedded'),
    createMigratedDatabase('embedded'),
  ]);
});
afterAll(async () => {
  await Promise.all([svc.close(), hs.close()]);
  await Promise.all([empty.drop(false), seeded.drop(false)]);
});

describe('crm-sync rematch (wiring)', () => {
  it('is listed in --help with its options', async () => {
    const { code, stdout } = await crmSync(['rematch', '--help'], {});
    expect(code).toBe(0);
    expect(stdout).toContain('--since <date>');
    expect(stdout).toContain('--dry-run');
  });

  it('refuses a --since that is not a date, before touching anything', async () => {
    const { code, stderr } = await crmSync(['rematch', '--since', 'last tuesday'], hubspotEnv(svc, hs));
    expect(code).not.toBe(0);
    expect(stderr).toContain('--since: expected a date like 2026-01-01, got "last tuesday"');
  });

  it('on a database with no written calls: an all-zero summary and no CRM request', async () => {
    hs.state.requests.clear();
    const { code, stdout, stderr } = await crmSync(
      ['rematch', '--since', '2026-01-01'],
      hubspotEnv(svc, hs, { DATA_DIR: empty.dataDir }),
      DB_COMMAND_MS,
    );
    expect({ code, stderr: stderr.replace(/^npm warn .*\n/gm, '') }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/moved\s+0/);
    expect(stdout).toMatch(/unchanged\s+0/);
    expect(stdout).toMatch(/failed\s+0/);
    expect(hs.state.requests.records).toEqual([]);
  }, 120_000);

  it('refuses while another process holds the embedded database, saying what to do', async () => {
    const holder = await openTestDatabase(empty);
    try {
      const { code, stderr } = await crmSync(
        ['rematch', '--since', '2026-01-01'],
        hubspotEnv(svc, hs, { DATA_DIR: empty.dataDir }),
        DB_COMMAND_MS,
      );
      expect(code).not.toBe(0);
      expect(stderr).toContain('stop it for the rematch, or run the worker on PostgreSQL');
    } finally {
      await holder.close();
    }
  }, 120_000);

  it('--json gives the summary; a failed call makes the exit code 1', async () => {
    // A call written to a deal the rules no longer choose, whose engagement is gone from HubSpot.
    const database = await openTestDatabase(seeded);
    const db = database.prisma;
    const now = new Date('2026-03-02T10:00:00Z');
    const call = { createdAt: now, participantEmail: 'jane.doe@acme.example' };
    await upsertDiscovered(db, { callId: 'c-lost', crm: 'hubspot', call, now });
    for (const to of ['context_pushed', 'awaiting_analysis', 'writing_back'] as const)
      await transitionSyncStatus(db, { callId: 'c-lost', crm: 'hubspot', to, now });
    await transitionSyncStatus(db, {
      callId: 'c-lost',
      crm: 'hubspot',
      to: 'written_back',
      now,
      set: { crmActivityId: '999999', crmDealId: '1', writtenBackAt: now },
    });
    await database.close();

    const { code, stdout } = await crmSync(
      ['rematch', '--since', '2026-03-01', '--json'],
      hubspotEnv(svc, hs, { DATA_DIR: seeded.dataDir }),
      DB_COMMAND_MS,
    );
    expect(code).toBe(1);
    const summary = JSON.parse(stdout) as { failed: number; calls: { callId: string; outcome: string }[] };
    expect(summary).toMatchObject({
      failed: 1,
      moved: 0,
      calls: [{ callId: 'c-lost', outcome: 'failed' }],
    });
  }, 120_000);
});

describe('the rematch summary', () => {
  const base = { seen: 3, moved: 1, unchanged: 1, failed: 1, dryRun: false };
  const calls = [
    { callId: 'c1', outcome: 'moved' as const, change: 'deal A [1] → B [2]', detail: '2 CRM write(s)' },
    { callId: 'c2', outcome: 'failed' as const, change: '', detail: 'Task 00T was not found (deleted?)' },
  ];

  it('counts each outcome and lists the moved and failed calls with why', () => {
    const text = formatRematch({ ...base, calls });
    expect(text).toMatch(/moved\s+1\n.*unchanged\s+1\n.*failed\s+1/s);
    expect(text).toMatch(/c1\s+moved\s+deal A \[1\] → B \[2\]\s+2 CRM write\(s\)/);
    expect(text).toContain('Task 00T was not found (deleted?)');
    expect(text).not.toContain('Dry run');
  });

  it('the progress line of a dry run says "would move", not "moved"', () => {
    const p = { seen: 3, moved: 2, failed: 0 };
    expect(formatRematchProgress(p, true)).toBe('rematch: 3 calls checked, 2 would move, 0 failed');
    expect(formatRematchProgress(p, false)).toBe('rematch: 3 calls checked, 2 moved, 0 failed');
  });

  it('a dry run says "would move" and that nothing was written; an early stop says why', () => {
    const text = formatRematch({ ...base, dryRun: true, calls, stoppedBy: 'HubSpot refused the token' });
    expect(text).toMatch(/would move\s+1/);
    expect(text).toContain('Dry run: nothing was written.');
    expect(text).toContain('Stopped early: HubSpot refused the token.');
  });
});
