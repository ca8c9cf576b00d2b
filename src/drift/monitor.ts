/**
 * The periodic silence-and-drift check (run by housekeeping): reads the facts, judges them, and
 * reports each change once: a `warn` line when a condition is raised, an `info` line when it
 * clears, and the 0/1 gauge per condition. Status pages judge the same facts on their own
 * (src/ops/status.ts), so they never wait for the next check.
 */
import type { CrmName } from '../crm/types.js';
import type { Logger } from '../log/logger.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import { DRIFT_CONDITIONS, type DriftCondition, type DriftThresholds } from '../config/drift.js';
import { detectDrift, type DriftWarning } from './detectors.js';
import { readDriftFacts } from './facts.js';

export interface DriftMonitor {
  /** Reads, judges, reports changes; returns the conditions now raised. */
  check(): Promise<DriftWarning[]>;
}

export function createDriftMonitor(deps: {
  db: Db;
  crm: CrmName;
  clock: Clock;
  logger: Logger;
  thresholds: DriftThresholds;
  /** Told each condition's state after every check (the metric). */
  setGauge?: (condition: DriftCondition, raised: boolean) => void;
}): DriftMonitor {
  const raised = new Set<DriftCondition>();
  return {
    async check() {
      const nowMs = deps.clock.now();
      const facts = await readDriftFacts(deps.db, { crm: deps.crm, nowMs, thresholds: deps.thresholds });
      const warnings = detectDrift(facts, deps.thresholds, nowMs);
      const now = new Set(warnings.map((w) => w.condition));
      for (const w of warnings) {
        if (!raised.has(w.condition)) deps.logger.warn({ code: w.code, condition: w.condition }, w.message);
      }
      for (const condition of raised) {
        if (!now.has(condition)) deps.logger.info({ condition }, `drift condition ${condition} cleared`);
      }
      raised.clear();
      for (const condition of DRIFT_CONDITIONS) {
        if (now.has(condition)) raised.add(condition);
        deps.setGauge?.(condition, now.has(condition));
      }
      return warnings;
    },
  };
}
