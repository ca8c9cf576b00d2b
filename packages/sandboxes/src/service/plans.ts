/**
 * The Service's published plan limits (service-api-spec.md section 8; windows per CONTRACT.md:
 * strict sliding 1 s and 60 s spans, daily cap per UTC day). The sandbox enforces them as the
 * vendor does; crm-sync reads the same spec in src/budget/plans.ts, and
 * test/budget/plansMatchService.test.ts keeps the two readings equal.
 */
export type PlanName = 'sales' | 'team' | 'enterprise';

export interface PlanLimits {
  /** Requests allowed in any 60-second span. */
  ratePerMinute: number;
  /** Requests allowed in any 1-second span. */
  burstPerSecond: number;
  /** Requests allowed per UTC day; null means unlimited. */
  dailyCap: number | null;
}

/** Enterprise limits are negotiated per contract, so there is no preset for them. */
export const PLAN_PRESETS: Record<Exclude<PlanName, 'enterprise'>, PlanLimits> = {
  sales: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
  team: { ratePerMinute: 120, burstPerSecond: 20, dailyCap: 50_000 },
};

export const PLAN_NAMES: readonly PlanName[] = ['sales', 'team', 'enterprise'];
