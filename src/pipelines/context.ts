/**
 * call.started: look the participant up in the CRM and push that context to the Service while the
 * call is still going. Runs at the budget's live priority; at most one Service request when the
 * webhook carried the call (the push itself), two when it did not.
 */
import { buildContext } from '../mapping/index.js';
import { upsertDiscovered } from '../store/syncStatus/discovered.js';
import { getSyncStatus } from '../store/syncStatus/queries.js';
import { mergeWarnings } from '../store/syncStatus/row.js';
import { transitionSyncStatus } from '../store/syncStatus/transitions.js';
import { callFactsOf, FINISHED_STATUSES } from './callFacts.js';
import type { PipelineDeps } from './deps.js';
import type { ContextJobPayload } from '../store/jobKinds.js';
import { sideEffect, type JobRun } from './jobRun.js';

export type ContextResult = 'pushed' | 'already_pushed' | 'call_finished' | 'no_participant';

export async function runContextJob(
  deps: PipelineDeps,
  payload: ContextJobPayload,
  /** The job run: its lease fences the move, its signal stops the push (jobRun.ts). */
  run?: JobRun,
): Promise<ContextResult> {
  const { db, crmName: crm, clock } = deps;
  const { callId } = payload;
  const existing = await getSyncStatus(db, callId, crm);
  if (existing?.contextPushedAt) return 'already_pushed';

  const call =
    payload.call ?? (await deps.service.getCall(callId, { priority: 'live', signal: run?.signal }));
  const { record } = await upsertDiscovered(db, {
    callId,
    crm,
    call: callFactsOf(call),
    now: new Date(clock.now()),
  });
  // A late or replayed call.started for a call that has ended: the coaching moment has passed.
  if (FINISHED_STATUSES.has(call.status) || record.state !== 'discovered') return 'call_finished';

  const email = call.participant?.email;
  if (!email) return 'no_participant';
  const lookup = await deps.lookups.get({
    email,
    name: call.participant?.name ?? undefined,
    company: call.participant?.company ?? undefined,
  });
  const warnings: string[] = [];
  const body = await buildContext(deps.mapping, { call, lookup, now: clock.now(), warnings });
  await sideEffect([run], () =>
    deps.service.pushContext(callId, body as Parameters<typeof deps.service.pushContext>[1], {
      priority: 'live',
    }),
  );

  const now = new Date(clock.now());
  if (payload.receivedAt !== undefined) {
    deps.metrics.contextPushLatency.observe(Math.max(0, now.getTime() - payload.receivedAt) / 1000);
  }
  await transitionSyncStatus(db, {
    callId,
    crm,
    to: 'context_pushed',
    expectedFrom: 'discovered',
    now,
    fence: run?.fence,
    // The event's type already says "context pushed"; the detail says how the records were found.
    detail: `matched by ${lookup.matchedBy}`,
    set: {
      contextPushedAt: now,
      crmContactId: lookup.contact?.id ?? null,
      crmCompanyId: lookup.company?.id ?? null,
      crmDealId: lookup.deals[0]?.id ?? null,
      matchDecision: lookup.decision,
      warnings: mergeWarnings(record.warnings, warnings),
    },
  }).catch((err: unknown) => {
    // The write-back moved the call on meanwhile; the push still happened, which is all that counts.
    if ((err as { code?: string }).code !== 'SYNC_STALE_STATE') throw err;
  });
  if (warnings.length > 0)
    deps.logger.warn({ callId, warnings }, 'context pushed without some optional fields');
  deps.logger.info({ callId, matchedBy: lookup.matchedBy }, 'context pushed');
  return 'pushed';
}
