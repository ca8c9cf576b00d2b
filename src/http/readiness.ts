/**
 * Builds the server's `readiness` from named checks, run concurrently; one that throws or outlasts
 * `timeoutMs` fails, so /readyz answers promptly. /readyz is open to anyone who reaches the port, so
 * a detail is only our own words: a check that throws is described by its `advice`, never its error.
 */
import { systemClock, type Clock } from '../util/clock.js';
import type { ReadinessCheckResult, ReadinessReport } from './types.js';

export type ReadinessCheck = () => Promise<ReadinessCheckResult>;

export interface ComposeReadinessOptions {
  /** Per check. Default 2000 ms. */
  timeoutMs?: number;
  clock?: Clock;
  /** Per check name: what failed and which setting to check, said when the check throws or hangs. */
  advice?: Record<string, string>;
}

export function composeReadiness(
  checks: Record<string, ReadinessCheck>,
  options: ComposeReadinessOptions = {},
): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const clock = options.clock ?? systemClock;

  const runOne = (name: string, check: ReadinessCheck): Promise<ReadinessCheckResult> =>
    new Promise((resolve) => {
      const advice = options.advice?.[name];
      const timer = clock.setTimer(
        () =>
          resolve({ ok: false, detail: `no answer within ${timeoutMs} ms${advice ? `: ${advice}` : ''}` }),
        timeoutMs,
      );
      check().then(
        (result) => {
          clock.clearTimer(timer);
          resolve(result);
        },
        () => {
          clock.clearTimer(timer);
          resolve({ ok: false, detail: advice ?? `the ${name} check failed` });
        },
      );
    });

  return async () => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => runOne(name, checks[name]!)));
    const report: ReadinessReport = { ready: true, checks: {} };
    names.forEach((name, i) => {
      const result = results[i]!;
      report.checks[name] = result;
      if (!result.ok) report.ready = false;
    });
    return report;
  };
}
