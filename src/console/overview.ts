/**
 * The console's overview, built from the status snapshot (so its numbers are those of
 * `crm-sync status --json` at the same moment) plus a few reads only the console needs.
 */
import type { SyncState } from '../sync/states.js';
import { countByStateSince, lastVerifiedWebhookAt, writtenBackPerHour } from '../store/syncStatusQueries.js';
import type { StatusSnapshot } from '../ops/status.js';
import type { ConsoleDeps } from './deps.js';
import { projectDailyCap, type CapProjection } from '../budget/forecast.js';
import { standingWarnings, type StandingWarning } from './warnings.js';

export interface Overview {
  snapshot: StatusSnapshot;
  now: Date;
  /** Calls per state: all time (the snapshot's), since midnight UTC, over the last 7 days. */
  calls: { all: Record<string, number>; today: Record<SyncState, number>; week: Record<SyncState, number> };
  /** The last 24 UTC hours, oldest first, each with the calls written back in it. */
  writtenPerHour: { hour: Date; count: number }[];
  capProjection: CapProjection;
  /** Seconds since the last call the cursor passed was created at the Service. */
  cursorLagSeconds: number | null;
  lastVerifiedWebhookAt: Date | null;
  warnings: StandingWarning[];
}

const HOUR_MS = 3_600_000;

export async function loadOverview(deps: ConsoleDeps): Promise<Overview> {
  const snapshot = await deps.status();
  const nowMs = Date.parse(snapshot.generatedAt);
  const midnight = Math.floor(nowMs / (24 * HOUR_MS)) * 24 * HOUR_MS;
  const firstHour = Math.floor(nowMs / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const [today, week, perHour, lastWebhook] = await Promise.all([
    countByStateSince(deps.db, deps.crm, new Date(midnight)),
    countByStateSince(deps.db, deps.crm, new Date(nowMs - 7 * 24 * HOUR_MS)),
    writtenBackPerHour(deps.db, deps.crm, new Date(firstHour)),
    lastVerifiedWebhookAt(deps.db),
  ]);
  const byHour = new Map(perHour.map((h) => [h.hour.getTime(), h.count]));
  const lastCall = snapshot.cursor.lastCallCreatedAt;
  return {
    snapshot,
    now: new Date(nowMs),
    calls: { all: snapshot.calls, today, week },
    writtenPerHour: Array.from({ length: 24 }, (_, i) => {
      const hour = firstHour + i * HOUR_MS;
      return { hour: new Date(hour), count: byHour.get(hour) ?? 0 };
    }),
    capProjection: projectDailyCap({
      usedToday: snapshot.budget.usedToday,
      dailyCap: snapshot.budget.dailyCap,
      inLastMinute: snapshot.budget.inLastMinute,
      nowMs,
    }),
    cursorLagSeconds: lastCall ? Math.max(0, Math.round((nowMs - Date.parse(lastCall)) / 1000)) : null,
    lastVerifiedWebhookAt: lastWebhook,
    warnings: standingWarnings(snapshot),
  };
}
