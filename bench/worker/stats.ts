import type { ServiceSandbox } from '../../src/sandbox/service/index.js';

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
