/**
 * `crm-sync rematch --since DATE`: runs the match rules again for calls already written and moves
 * each activity (with its drafts) whose contact, company or deal changed, then records the move. Why
 * a second or interrupted run writes nothing twice: docs/reliability.md, "Rematch".
 */
import { CrmAuthError, CrmDailyLimitError } from '../crm/errors.js';
import { linkChanges, type LinkChange } from '../crm/relink.js';
import type { LinkMove, LinkMoveResult, MatchDecision } from '../crm/types.js';
import {
  lookupKey,
  type ActivityLinks,
  type CrmAdapter,
  type CrmLookup,
  type CrmName,
} from '../crm/types.js';
import { dealRuleFor, dealTarget, linksOf, lookupFieldsFor } from '../mapping/index.js';
import type { Mapping } from '../mapping/types.js';
import type { Db } from '../store/database.js';
import { moveDealCalls } from '../store/dealSignalRepo.js';
import { listWrittenSince, recordRematch } from '../store/rematchRepo.js';
import { rematchDetail } from '../store/syncEventRepo.js';
import type { SyncStatusRecord } from '../store/syncStatusRepo.js';
import type { Clock } from '../util/clock.js';

export interface RematchDeps {
  db: Db;
  crmName: CrmName;
  crm: CrmAdapter;
  mapping: Mapping;
  clock: Clock;
}

export interface RematchOptions {
  since: Date;
  /** Look up and read the CRM's links, report what would move; write nothing anywhere. */
  dryRun?: boolean | undefined;
  /** Calls per page: one batch lookup and a few batched link reads/writes each (default 100). */
  pageSize?: number | undefined;
  onProgress?: ((progress: RematchProgress) => void) | undefined;
}

export interface RematchProgress {
  seen: number;
  moved: number;
  unchanged: number;
  failed: number;
}

export interface RematchOutcome {
  callId: string;
  outcome: 'moved' | 'failed';
  /** What moved (or would move), e.g. `deal Acme - Add-on [301] → Acme - Expansion [302]`. */
  change: string;
  /** Why it failed; for a move: the CRM writes it took (0: the CRM already showed the new links). */
  detail: string;
}

export interface RematchSummary extends RematchProgress {
  dryRun: boolean;
  /** The moved and failed calls (unchanged ones are only counted). */
  calls: RematchOutcome[];
  /** Set when a CRM-wide error (credentials refused, daily limit) ended the run early. */
  stoppedBy?: string | undefined;
}

export async function runRematch(deps: RematchDeps, options: RematchOptions): Promise<RematchSummary> {
  const pageSize = options.pageSize ?? 100;
  const summary: RematchSummary = {
    dryRun: options.dryRun === true,
    seen: 0,
    moved: 0,
    unchanged: 0,
    failed: 0,
    calls: [],
  };
  let after: string | undefined;
  for (;;) {
    const rows = await listWrittenSince(deps.db, {
      crm: deps.crmName,
      since: options.since,
      after,
      limit: pageSize,
    });
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.callId;
    summary.seen += rows.length;
    await rematchPage(deps, rows, summary);
    options.onProgress?.(progressOf(summary));
    if (summary.stoppedBy !== undefined || rows.length < pageSize) break;
  }
  return summary;
}

interface Planned {
  row: SyncStatusRecord;
  lookup: CrmLookup;
  /** The activity's move. */
  move: LinkMove;
  /** Its drafts' moves: they were linked to the same records, and follow the activity. */
  drafts: LinkMove[];
  /** What moves, as the summary and the history line say it. */
  change: string;
}

/** One page: one batch lookup, one batched move, then each moved call recorded on its own. */
async function rematchPage(
  deps: RematchDeps,
  rows: SyncStatusRecord[],
  summary: RematchSummary,
): Promise<void> {
  const fail = (callId: string, change: string, error: unknown) => {
    summary.failed += 1;
    summary.calls.push({ callId, outcome: 'failed', change, detail: messageOf(error) });
  };
  let lookups: Map<string, CrmLookup>;
  try {
    lookups = await lookUp(deps, rows);
  } catch (error) {
    if (isCrmWide(error)) {
      // Said once, as the reason the run stopped: these calls were not checked, not failed.
      summary.seen -= rows.length;
      summary.stoppedBy = crmWideReason(error, deps.crmName);
      return;
    }
    for (const row of rows) fail(row.callId, '', error);
    return;
  }
  const planned: Planned[] = [];
  for (const row of rows) {
    const lookup = lookups.get(row.callId);
    if (!lookup) {
      fail(row.callId, '', 'no participant email is stored for this call');
      continue;
    }
    const from = storedLinks(row);
    const to = linksOf(lookup);
    const changes = linkChanges(from, to);
    if (changes.length === 0) {
      summary.unchanged += 1;
      continue;
    }
    const change = describe(changes, row.matchDecision, lookup.decision);
    // The write-back would skip such a call; an activity is never left linked to nothing.
    if (!lookup.contact && !lookup.company) {
      fail(row.callId, change, 'no CRM record matches it now; its links are kept');
      continue;
    }
    const record = deps.mapping.writeback.followups?.kind;
    planned.push({
      row,
      lookup,
      change,
      move: { callId: row.callId, activityId: row.crmActivityId!, from, to },
      drafts: record
        ? row.crmFollowupIds.map((id) => ({ callId: row.callId, activityId: id, record, from, to }))
        : [],
    });
  }
  if (planned.length === 0) return;
  let moved: LinkMoveResult[];
  try {
    moved = await deps.crm.moveActivityLinks(
      planned.flatMap((p) => [p.move, ...p.drafts]),
      { dryRun: summary.dryRun },
    );
  } catch (error) {
    for (const p of planned) fail(p.row.callId, p.change, error);
    return;
  }
  const results = perCall(planned, moved);
  const dealMoves: { callId: string; dealId: string | null }[] = [];
  for (const [i, { row, lookup, change, move }] of planned.entries()) {
    const result = results[i];
    if (!result?.ok) {
      fail(row.callId, change, result?.error ?? 'the CRM adapter gave no result');
      continue;
    }
    try {
      if (!summary.dryRun) {
        await recordRematch(deps.db, {
          callId: row.callId,
          crm: deps.crmName,
          activityId: move.activityId,
          now: new Date(deps.clock.now()),
          contactId: move.to.contactId ?? null,
          companyId: move.to.companyId ?? null,
          dealId: move.to.dealId ?? null,
          decision: lookup.decision,
          detail: rematchDetail(change),
        });
        if (move.from.dealId !== move.to.dealId)
          dealMoves.push({ callId: row.callId, dealId: move.to.dealId ?? null });
      }
    } catch (error) {
      fail(row.callId, change, error);
      continue;
    }
    summary.moved += 1;
    summary.calls.push({
      callId: row.callId,
      outcome: 'moved',
      change,
      detail:
        result.writes === 0
          ? 'the CRM already showed the new links'
          : `${result.writes} CRM write(s)${summary.dryRun ? ' to make' : ''}`,
    });
  }
  // The moved calls' deal signals follow them: both deals become due, and the worker writes them
  // with its next write-back batch or housekeeping pass (src/pipelines/dealSignals.ts).
  if (dealMoves.length > 0 && dealTarget(deps.mapping)) {
    await moveDealCalls(deps.db, { crm: deps.crmName, moves: dealMoves, now: new Date(deps.clock.now()) });
  }
}

/**
 * One result per planned call from the results of its activity's and drafts' moves, in the order
 * they were asked: the first failure, else the writes summed. The call's row records the new
 * links only when all of them moved; a rerun then moves what is left.
 */
function perCall(planned: Planned[], moved: LinkMoveResult[]): (LinkMoveResult | undefined)[] {
  let at = 0;
  return planned.map((p) => {
    const mine = moved.slice(at, at + 1 + p.drafts.length);
    at += 1 + p.drafts.length;
    if (mine.length < 1 + p.drafts.length) return undefined;
    const failed = mine.find((r) => !r.ok);
    if (failed) return failed;
    return { key: p.row.callId, ok: true, writes: mine.reduce((n, r) => n + (r.ok ? r.writes : 0), 0) };
  });
}

const progressOf = (s: RematchSummary): RematchProgress => ({
  seen: s.seen,
  moved: s.moved,
  unchanged: s.unchanged,
  failed: s.failed,
});

/** The page's lookups by call id: one batch lookup, plus single ones for a repeated address with another company. */
async function lookUp(deps: RematchDeps, rows: SyncStatusRecord[]): Promise<Map<string, CrmLookup>> {
  const fields = lookupFieldsFor(deps.mapping);
  const rule = dealRuleFor(deps.mapping);
  const participantOf = (row: SyncStatusRecord) => ({
    email: row.participantEmail!,
    company: row.participantCompany ?? undefined,
  });
  const withEmail = rows.filter((r) => r.participantEmail);
  const first = new Map<string, SyncStatusRecord>();
  for (const row of withEmail)
    if (!first.has(lookupKey(row.participantEmail!))) first.set(lookupKey(row.participantEmail!), row);
  const batch = await deps.crm.lookupMany([...first.values()].map(participantOf), fields, rule);
  const out = new Map<string, CrmLookup>();
  for (const row of withEmail) {
    const key = lookupKey(row.participantEmail!);
    const sameAsFirst = (first.get(key)!.participantCompany ?? '') === (row.participantCompany ?? '');
    const found = sameAsFirst ? batch.get(key) : undefined;
    out.set(row.callId, found ?? (await deps.crm.lookup(participantOf(row), fields, rule)));
  }
  return out;
}

/** The links the call's last decision made (as the write-back's `linksOf` did). */
export function storedLinks(row: SyncStatusRecord): ActivityLinks {
  return {
    contactId: row.crmContactId ?? undefined,
    contactType: row.crmContactId
      ? row.matchDecision?.contact.type === 'lead'
        ? 'lead'
        : 'contact'
      : undefined,
    companyId: row.crmCompanyId ?? undefined,
    dealId: row.crmDealId ?? undefined,
  };
}

/**
 * One line per changed slot: `deal Acme - Add-on [301] → Acme - Expansion [302]`. Contacts are
 * named by id only: a person's name does not belong in output that is logged or pasted.
 */
export function describe(
  changes: LinkChange[],
  before: MatchDecision | null | undefined,
  after: MatchDecision | null | undefined,
): string {
  const name = (d: MatchDecision | null | undefined, c: LinkChange, id: string | undefined) => {
    if (id === undefined) return '(none)';
    const label = c.kind === 'contact' ? null : d?.[c.kind].id === id ? d[c.kind].label : null;
    return label ? `${label} [${id}]` : `[${id}]`;
  };
  return changes.map((c) => `${c.kind} ${name(before, c, c.from)} → ${name(after, c, c.to)}`).join('; ');
}

/** The one line a CRM-wide stop is reported with: the vendor's text is long and names no setting. */
function crmWideReason(error: unknown, crm: 'hubspot' | 'salesforce'): string {
  if (!(error instanceof CrmAuthError)) return messageOf(error);
  const label = crm === 'hubspot' ? 'HubSpot' : 'Salesforce';
  const settings = crm === 'hubspot' ? 'HUBSPOT_*' : 'SALESFORCE_*';
  return `${label} rejected the credentials; fix the ${settings} settings ("crm-sync doctor" checks them)`;
}

function isCrmWide(error: unknown): boolean {
  return error instanceof CrmAuthError || error instanceof CrmDailyLimitError;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
