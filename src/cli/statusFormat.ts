/** Renders the status snapshot and one call's history for a terminal. Pure. */
import { formatDecision } from '../crm/match/format.js';
import type { MatchDecision } from '../crm/types.js';
import { describeCallDealSignals, type CallDealSignalsView } from '../deals/callSignalsText.js';
import { crmStandingLines } from '../ops/crmStanding.js';
import type { StatusSnapshot } from '../ops/status.js';
import { formatTable } from '../util/table.js';

/** Text tables fit a terminal this wide: long reasons wrap rather than being cut (issue 23). */
const CLI_WIDTH = 100;

export function formatStatus(s: StatusSnapshot): string {
  const lines: string[] = [];
  lines.push(`crm-sync status (${s.crm}) at ${s.generatedAt}`, '');
  lines.push('Calls by sync state');
  lines.push(
    formatTable(
      ['state', 'calls'],
      Object.entries(s.calls).map(([k, v]) => [k, v]),
    ),
    '',
  );
  const cap = s.budget.dailyCap === null ? 'unlimited' : String(s.budget.dailyCap);
  lines.push(
    `Service budget: ${s.budget.usedToday} of ${cap} requests used today (UTC); ` +
      `${s.budget.inLastSecond}/${s.budget.plan.burstPerSecond} in the last second, ` +
      `${s.budget.inLastMinute}/${s.budget.plan.ratePerMinute} in the last minute` +
      (s.budget.pausedUntil ? `; PAUSED until ${s.budget.pausedUntil}` : ''),
  );
  lines.push(...formatForecast(s));
  const q = s.jobs.queuedByPriority;
  lines.push(
    `Queue: ${q.live ?? 0} live, ${q.writeback ?? 0} write-back, ${q.backfill ?? 0} backfill waiting; ` +
      `${s.jobs.byState.running ?? 0} running, ${s.jobs.byState.failed ?? 0} failed jobs`,
  );
  lines.push(
    s.cursor.updatedAt
      ? `Cursor: last call created ${s.cursor.lastCallCreatedAt ?? 'n/a'}; moved ${s.cursor.ageSeconds}s ago`
      : 'Cursor: not started yet',
  );
  const crmCredentials = s.worker?.crmCredentials as
    { accepted?: boolean | null; detail?: string } | undefined;
  // The worker's flag when it answered; else (PostgreSQL, read directly) the jobs it held back.
  if (s.worker?.serviceKeyRejected || (s.serviceKey?.heldJobs ?? 0) > 0)
    lines.push(
      `WARNING: the Service rejected SERVICE_API_KEY (401); replace it and restart the worker.` +
        ((s.serviceKey?.heldJobs ?? 0) > 0
          ? ` ${s.serviceKey!.heldJobs} job(s) wait for a working key.`
          : ''),
    );
  if (crmCredentials?.accepted === false)
    lines.push(`WARNING: ${crmCredentials.detail ?? 'CRM credentials rejected'}`);
  if (s.crmCredentials.heldJobs > 0) {
    lines.push(
      `WARNING: ${s.crmCredentials.heldJobs} job(s) held back by rejected CRM credentials` +
        (s.crmCredentials.reason ? `: ${s.crmCredentials.reason}` : '') +
        ' (they run within a minute of the credentials working again)',
    );
  }
  for (const w of s.drift ?? []) lines.push(`WARNING (${w.code}): ${w.message}`);
  for (const w of crmStandingLines(s.crmStanding ?? {})) lines.push(`WARNING (${w.code}): ${w.message}`);
  lines.push('');
  if (s.recentFailures.length === 0) lines.push('Recent failures: none');
  else {
    lines.push('Recent failures');
    lines.push(
      formatTable(
        ['call', 'state', 'code', 'attempts', 'next try', 'reason'],
        s.recentFailures.map((f) => [
          f.callId,
          f.state,
          f.code ?? '',
          f.attempts,
          f.nextAttemptAt ?? '-',
          f.message ?? '',
        ]),
        { width: CLI_WIDTH },
      ),
    );
  }
  if (s.recentSkips.length > 0) {
    lines.push('', 'Recently skipped');
    lines.push(
      formatTable(
        ['call', 'at', 'reason'],
        s.recentSkips.map((k) => [k.callId, k.at, k.reason ?? '']),
        { width: CLI_WIDTH },
      ),
    );
  }
  return lines.join('\n');
}

/** The budget forecast's two lines (absent from snapshots of workers older than it). */
function formatForecast(s: StatusSnapshot): string[] {
  if (!s.forecast) return [];
  const cap = s.forecast.dailyCap;
  const capLine = {
    unlimited: 'no daily cap',
    reached: 'the daily cap is spent until 00:00 UTC',
    idle: 'no requests in the last minute',
    lasts_today: 'the daily cap lasts the UTC day at the current pace',
    runs_out: `the daily cap runs out at ${cap.at} at the current pace`,
  }[cap.kind];
  const b = s.forecast.backfill;
  // The forecast counts the jobs due now; the queue line counts every waiting one: say the rest.
  const later = (s.jobs.queuedByPriority.backfill ?? 0) - (b?.queuedCalls ?? 0);
  const laterText =
    later > 0 ? `${later} call(s) waiting for a later time (not yet analysed, or backing off)` : '';
  const backfillLine = b
    ? `Backfill: ${b.queuedCalls} call(s) queued, about ${b.requests} requests ` +
      `(${b.requestsPerCall.value.toFixed(2)} per call, ${b.requestsPerCall.source}); ETA ${b.finishesAt}` +
      (laterText ? `; ${laterText}` : '')
    : laterText
      ? `Backfill: none due now; ${laterText}`
      : 'Backfill: nothing queued';
  return [`Forecast: ${capLine}`, backfillLine];
}

export interface CallView {
  status: Record<string, unknown>;
  history: { at: string | Date; fromState: string | null; toState: string; detail: string | null }[];
  /** Absent from an older worker's answer. */
  dealSignals?: CallDealSignalsView | null;
}

export function formatCall(view: CallView): string {
  const { matchDecision, warnings, ...s } = view.status;
  const fields = Object.entries(s)
    .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => [k, v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(', ') : String(v)]);
  const history = view.history.map((h) => [
    h.at instanceof Date ? h.at.toISOString() : String(h.at),
    h.fromState ?? '(new)',
    h.toState,
    h.detail ?? '',
  ]);
  const list = Array.isArray(warnings) ? (warnings as string[]) : [];
  return [
    formatTable(['field', 'value'], fields, { width: CLI_WIDTH }),
    '',
    'Why these CRM records',
    matchDecision ? formatDecision(matchDecision as MatchDecision) : '(not recorded)',
    ...(list.length > 0 ? ['', 'Warnings', ...list.map((w) => `- ${w}`)] : []),
    ...(view.dealSignals === undefined
      ? []
      : ['', 'Deal signals', describeCallDealSignals(view.dealSignals)]),
    '',
    'History',
    formatTable(['at', 'from', 'to', 'detail'], history, { width: CLI_WIDTH }),
  ].join('\n');
}
