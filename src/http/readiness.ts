/**
 * Builds the `readiness` function the server takes from named checks (database, Service
 * reachable, key valid...). Checks run concurrently; one that throws or outlasts `timeoutMs`
 * counts as failed, so /readyz always answers promptly.
 */
import { systemClock, type Clock } from '../util/clock.js';
import type { ReadinessCheckResult, ReadinessReport } from './types.js';

export type ReadinessCheck = () => Promise<ReadinessCheckResult>;

export interface ComposeReadinessOptions {
  /** Per check. Default 2000 ms. */
  timeoutMs?: number;
  clock?: Clock;
}

export function composeReadiness(
  checks: Record<string, ReadinessCheck>,
  options: ComposeReadinessOptions = {},
): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const clock = options.clock ?? systemClock;

  const runOne = (check: ReadinessCheck): Promise<ReadinessCheckResult> =>
    new Promise((resolve) => {
      const timer = clock.setTimer(
        () => resolve({ ok: false, detail: `no answer within ${timeoutMs} ms` }),
        timeoutMs,
      );
      check().then(
        (result) => {
          clock.clearTimer(timer);
          resolve(result);
        },
        (err: unknown) => {
          clock.clearTimer(timer);
          resolve({ ok: false, detail: err instanceof Error ? err.message : String(err) });
        },
      );
    });

  return async () => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => runOne(checks[name]!)));
    const report: ReadinessReport = { ready: true, checks: {} };
    names.forEach((name, i) => {
      const result = results[i]!;
      report.checks[name] = result;
      if (!result.ok) report.ready = false;
    });
    return report;
  };
}
