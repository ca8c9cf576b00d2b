import type { ServiceSandbox } from '@crm-sync/sandboxes/service';

/** The nearest-rank percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Milliseconds from each call's `call.started` to the first context the Service received for it,
 * for the calls that got one.
 */
export function contextLatenciesMs(svc: ServiceSandbox, callIds: readonly string[]): number[] {
  const latencies: number[] = [];
  for (const id of callIds) {
    const started = svc.state.events.find(
      (e) => e.event.type === 'call.started' && e.event.data.call_id === id,
    );
    const context = svc.state.contexts(id)[0];
    if (started && context)
      latencies.push(Date.parse(context.receivedAt) - Date.parse(started.event.created_at));
  }
  return latencies;
}

export interface TimedValue {
  hours: number;
  value: number;
}

/**
 * The slope of the least-squares line through `points`, in value per hour (NaN for fewer than two
 * distinct times): how fast a sampled figure such as RSS grows once start-up is over.
 */
export function slopePerHour(points: readonly TimedValue[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const meanT = points.reduce((sum, p) => sum + p.hours, 0) / n;
  const meanV = points.reduce((sum, p) => sum + p.value, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const p of points) {
    covariance += (p.hours - meanT) * (p.value - meanV);
    variance += (p.hours - meanT) ** 2;
  }
  return variance === 0 ? Number.NaN : covariance / variance;
}
