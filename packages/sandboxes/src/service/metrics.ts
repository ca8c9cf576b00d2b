/**
 * `GET /v1/metrics?from=&to=&group_by=`: CONTRACT.md treats the answer as opaque JSON, so this is
 * one plausible shape: totals over calls created in [from, to), optionally grouped.
 */
import { parseTimestampParams, type ParseResult } from './listing.js';
import type { CallRecord } from './types.js';

export const GROUP_BY = ['day', 'week', 'platform', 'methodology', 'status'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface MetricsQuery {
  fromMs?: number;
  toMs?: number;
  groupBy?: GroupBy;
}

export interface MetricsTotals {
  calls: number;
  analyzed: number;
  average_score: number | null;
  total_duration_seconds: number;
  objections_detected: number;
  objections_handled: number;
  objection_handle_rate: number | null;
}

export function parseMetricsQuery(params: URLSearchParams): ParseResult<MetricsQuery> {
  const dates = parseTimestampParams(params, { from: 'fromMs', to: 'toMs' });
  if (!dates.ok) return dates;
  const query: MetricsQuery = { ...dates.value };
  const groupBy = params.get('group_by');
  if (groupBy !== null) {
    if (!(GROUP_BY as readonly string[]).includes(groupBy)) {
      return {
        ok: false,
        code: 'invalid_parameter',
        message: `group_by must be one of ${GROUP_BY.join(', ')}`,
      };
    }
    query.groupBy = groupBy as GroupBy;
  }
  return { ok: true, value: query };
}

function totals(calls: readonly CallRecord[]): MetricsTotals {
  const analysed = calls.filter((c) => c.status === 'analyzed' && c.analysis);
  const objections = analysed.flatMap((c) => c.analysis?.objections ?? []);
  const handled = objections.filter((o) => o.handled).length;
  const scoreSum = analysed.reduce((sum, c) => sum + (c.analysis?.scoring.overall ?? 0), 0);
  return {
    calls: calls.length,
    analyzed: analysed.length,
    average_score: analysed.length ? Math.round((scoreSum / analysed.length) * 10) / 10 : null,
    total_duration_seconds: calls.reduce((sum, c) => sum + (c.durationSeconds ?? 0), 0),
    objections_detected: objections.length,
    objections_handled: handled,
    objection_handle_rate: objections.length ? Math.round((handled / objections.length) * 1000) / 1000 : null,
  };
}

function groupKey(call: CallRecord, groupBy: GroupBy): string {
  const day = new Date(call.createdAtMs).toISOString().slice(0, 10);
  switch (groupBy) {
    case 'day':
      return day;
    case 'week': {
      // ISO weeks start on Monday; the key is that Monday's date.
      const d = new Date(`${day}T00:00:00Z`);
      d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
      return d.toISOString().slice(0, 10);
    }
    case 'platform':
      return call.platform;
    case 'methodology':
      return call.methodology;
    case 'status':
      return call.status;
  }
}

export function computeMetrics(calls: readonly CallRecord[], query: MetricsQuery): Record<string, unknown> {
  const inRange = calls.filter(
    (c) =>
      (query.fromMs === undefined || c.createdAtMs >= query.fromMs) &&
      (query.toMs === undefined || c.createdAtMs < query.toMs),
  );
  const result: Record<string, unknown> = {
    from: query.fromMs === undefined ? null : new Date(query.fromMs).toISOString(),
    to: query.toMs === undefined ? null : new Date(query.toMs).toISOString(),
    group_by: query.groupBy ?? null,
    totals: totals(inRange),
  };
  if (query.groupBy) {
    const groups = new Map<string, CallRecord[]>();
    for (const call of inRange) {
      const key = groupKey(call, query.groupBy);
      groups.set(key, [...(groups.get(key) ?? []), call]);
    }
    result.groups = [...groups.keys()].sort().map((key) => ({ key, ...totals(groups.get(key) ?? []) }));
  }
  return result;
}
