/**
 * A worker killed between asking the Service for follow-ups and hearing back leaves a claim with
 * no outcome. The job's next run must record FOLLOWUP_UNCERTAIN and must not ask again; a claim
 * whose answer was recorded (drafts, none, or an ambiguous failure) must not be warned about.
 * The kill is the first run's request never settling: its claim stays, nothing else is written.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { FOLLOWUP_UNCERTAIN, generateFollowupsOnce } from '../../src/pipelines/followups.js';
import { ServiceTransientError } from '../../src/service/errors.js';
import type { FollowupOptions, ServiceClient } from '../../src/service/types.js';
import type { Db } from '../../src/store/database.js';
import { saveFollowupDrafts, settleAbandonedFollowupClaim } from '../../src/store/followupRepo.js';
import { getSyncStatus, upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { replayCall } from '../../src/ops/replay.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const DRAFT = { id: 'd1', subject: 'Thanks', body: 'Next steps', to: ['a@b.c'] };

/** A Service whose follow-up answer is `answer`; counts requests sent (aroundSend let them go). */
function service(answer: () => Promise<unknown>) {
  const asked = { count: 0 };
  const send = () => {
    asked.count++;
    return answer();
  };
  const client = {
    generateFollowups: (_id: string, _body: unknown, opts: FollowupOptions) =>
      opts.aroundSend ? opts.aroundSend(send) : send(),
  } as unknown as ServiceClient;
  return { client, asked };
}

describe.each(DATABASE_KINDS)('an abandoned follow-up claim (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 12));

  // As the write-back calls it: with the claim its read of the call's row found.
  async function run(db: Db, callId: string, client: ServiceClient, lines: string[] = []) {
    const logger = createLogger({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const claimed = (await getSyncStatus(db, callId, 'hubspot'))?.followupsRequestedAt != null;
    return generateFollowupsOnce(
      { db, service: client, clock, logger },
      {
        callId,
        crm: 'hubspot',
        email: 'a@b.c',
        item: { jobId: 1, payload: { callId, reason: 'poll' }, priority: 'writeback' },
        claimed,
      },
    );
  }

  async function warningsOf(db: Db, callId: string): Promise<string[]> {
    return (await getSyncStatus(db, callId, 'hubspot'))?.warnings ?? [];
  }

  /** The first run asks and is killed before the answer: the request never settles. */
  async function killedMidRequest(db: Db, callId: string): Promise<void> {
    await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date(clock.now()) });
    const first = service(() => new Promise(() => {}));
    void run(db, callId, first.client);
    await expect.poll(() => first.asked.count).toBe(1);
  }

  it('gets FOLLOWUP_UNCERTAIN on the next run, once, without a second request', async () => {
    const db = get().db.prisma;
    await killedMidRequest(db, 'c-killed');
    await clock.advance(90_000); // the lease lapses; the job runs again

    const second = service(() => Promise.resolve([DRAFT]));
    const lines: string[] = [];
    expect(await run(db, 'c-killed', second.client, lines)).toEqual([]);
    expect(second.asked.count).toBe(0);
    const warnings = await warningsOf(db, 'c-killed');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^${FOLLOWUP_UNCERTAIN}: the worker asking for follow-ups at 2026-01-05T12:00:00.000Z stopped`,
      ),
    );
    expect(lines.filter((l) => l.includes(FOLLOWUP_UNCERTAIN))).toHaveLength(1);

    // A third run (the CRM write failed, say) neither asks nor warns again.
    const third = service(() => Promise.resolve([DRAFT]));
    const later: string[] = [];
    expect(await run(db, 'c-killed', third.client, later)).toEqual([]);
    expect(third.asked.count).toBe(0);
    expect(await warningsOf(db, 'c-killed')).toEqual(warnings);
    expect(later.filter((l) => l.includes(FOLLOWUP_UNCERTAIN))).toHaveLength(0);
  });

  it('is not warned about when the answer was recorded', async () => {
    const db = get().db.prisma;
    // Answered with no drafts, then the run failed later (the CRM write): the next run is quiet.
    await upsertDiscovered(db, { callId: 'c-none', crm: 'hubspot', now: new Date(clock.now()) });
    expect(await run(db, 'c-none', service(() => Promise.resolve([])).client)).toEqual([]);
    const rerun = service(() => Promise.resolve([DRAFT]));
    expect(await run(db, 'c-none', rerun.client)).toEqual([]);
    expect(rerun.asked.count).toBe(0);
    expect(await warningsOf(db, 'c-none')).toEqual([]);

    // An ambiguous failure's warning is the only one.
    await upsertDiscovered(db, { callId: 'c-500', crm: 'hubspot', now: new Date(clock.now()) });
    const failing = service(() =>
      Promise.reject(
        new ServiceTransientError('boom', { method: 'POST', path: '/x', status: 500 }, 'status'),
      ),
    );
    await run(db, 'c-500', failing.client);
    await run(db, 'c-500', service(() => Promise.resolve([DRAFT])).client);
    expect(await warningsOf(db, 'c-500')).toEqual([expect.stringMatching(/after it may have reached/)]);
  });

  it('is not warned about when drafts arrived by webhook meanwhile', async () => {
    const db = get().db.prisma;
    await killedMidRequest(db, 'c-hooked');
    await saveFollowupDrafts(db, 'c-hooked', [DRAFT], new Date(clock.now()));
    const now = new Date(clock.now());
    const settled = await settleAbandonedFollowupClaim(db, {
      callId: 'c-hooked',
      crm: 'hubspot',
      now,
      warning: () => `${FOLLOWUP_UNCERTAIN}: x`,
    });
    expect(settled).toBe(false);
    expect(await warningsOf(db, 'c-hooked')).toEqual([]);
  });

  it('answers with the drafts the earlier request made, when they arrived after the batch read', async () => {
    const db = get().db.prisma;
    await killedMidRequest(db, 'c-late');
    await clock.advance(90_000);
    // The rerun's batch read no drafts; followup.generated stored them before it got this far.
    await saveFollowupDrafts(db, 'c-late', [DRAFT], new Date(clock.now()));
    const rerun = service(() => Promise.resolve([{ ...DRAFT, id: 'd2' }]));
    const lines: string[] = [];
    expect((await run(db, 'c-late', rerun.client, lines)).map((d) => d.id)).toEqual(['d1']);
    expect(rerun.asked.count).toBe(0);
    expect(await warningsOf(db, 'c-late')).toEqual([]);
    expect(lines.filter((l) => l.includes(FOLLOWUP_UNCERTAIN))).toHaveLength(0);
  });

  it('is found again after an operator replay asks anew and that run is killed too', async () => {
    const db = get().db.prisma;
    await upsertDiscovered(db, { callId: 'c-replayed', crm: 'hubspot', now: new Date(clock.now()) });
    await run(db, 'c-replayed', service(() => Promise.resolve([])).client);
    await replayCall(db, 'hubspot', 'c-replayed', new Date(clock.now()), { regenerateFollowups: true });
    const replayed = service(() => new Promise(() => {}));
    void run(db, 'c-replayed', replayed.client);
    await expect.poll(() => replayed.asked.count).toBe(1);

    await run(db, 'c-replayed', service(() => Promise.resolve([DRAFT])).client);
    expect(await warningsOf(db, 'c-replayed')).toEqual([expect.stringMatching(/stopped before the answer/)]);
  });
});
