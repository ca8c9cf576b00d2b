/**
 * `crm-sync replay` as an admin runs it, on the embedded database the CLI opens itself: a call whose
 * follow-up generation was answered or ended uncertain keeps its claim (the write-back then asks
 * the Service nothing), unless `--regenerate-followups` is given (issue 22, defect 7). That the
 * write-back then does or does not POST again is tested through the worker in
 * test/worker/followupFailures.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimFollowupGeneration,
  saveFollowupAnswer,
  settleFollowupClaim,
} from '../../src/store/followupClaims.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { runCli } from '../e2e/harness.js';
import { createMigratedDatabase, openTestDatabase, type TestDatabase } from '../store/helpers.js';
import { CONFIG_DIR } from './helpers.js';

const NOW = new Date(Date.UTC(2026, 0, 5, 12));
let target: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  target = await createMigratedDatabase('embedded');
  const db = await openTestDatabase(target);
  try {
    for (const callId of ['c_none', 'c_uncertain']) {
      await upsertDiscovered(db.prisma, { callId, crm: 'hubspot', now: NOW });
      await claimFollowupGeneration(db.prisma, callId, 'hubspot', NOW);
      await transitionSyncStatus(db.prisma, { callId, crm: 'hubspot', to: 'failed', now: NOW });
    }
    await saveFollowupAnswer(db.prisma, { callId: 'c_none', crm: 'hubspot', drafts: [], now: NOW });
    await settleFollowupClaim(db.prisma, {
      callId: 'c_uncertain',
      crm: 'hubspot',
      now: NOW,
      warning: 'FOLLOWUP_UNCERTAIN: x',
    });
  } finally {
    await db.close();
  }
  env = {
    CRM: 'hubspot',
    HUBSPOT_ACCESS_TOKEN: 'pat-test-not-a-token',
    SERVICE_API_KEY: 'sk_test_cli_replay',
    CONFIG_DIR,
    DATA_DIR: target.dataDir,
  };
});
afterAll(() => target?.drop(false));

async function claims(): Promise<Record<string, boolean>> {
  const db = await openTestDatabase(target);
  try {
    const rows = await db.prisma.syncStatus.findMany({ orderBy: { callId: 'asc' } });
    return Object.fromEntries(rows.map((r) => [r.callId, r.followupsRequestedAt !== null]));
  } finally {
    await db.close();
  }
}

describe('crm-sync replay and follow-ups', { timeout: 120_000 }, () => {
  it('keeps the generation claims without --regenerate-followups, and clears them with it', async () => {
    const plain = await runCli(['replay', '--failed'], env);
    expect(plain.stderr).toBe('');
    expect(plain.stdout).toMatch(/Queued 2 call\(s\)/);
    expect(await claims()).toEqual({ c_none: true, c_uncertain: true });

    const asked = await runCli(['replay', '--call', 'c_uncertain', '--regenerate-followups'], env);
    expect(asked.code).toBe(0);
    expect(await claims()).toEqual({ c_none: true, c_uncertain: false });
  });
});
