/**
 * The Service's published plan limits (service-api-spec.md section 8; windows per CONTRACT.md:
 * strict sliding 1 s and 60 s spans, daily cap per UTC day). The Service sandbox enforces its own
 * copy (packages/sandboxes/src/service/plans.ts); test/budget/plansMatchService.test.ts keeps them equal.
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

export const PLAN_PRESETS: Record<Exclude<PlanName, 'enterprise'>, PlanLimits> = {
  sales: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
  team: { ratePerMinute: 120, burstPerSecond: 20, dailyCap: 50_000 },
};

export const PLAN_NAMES: readonly PlanName[] = ['sales', 'team', 'enterprise'];

export interface PlanOverrides {
  ratePerMinute?: number | undefined;
  burstPerSecond?: number | undefined;
  dailyCap?: number | null | undefined;
}

/**
 * Resolves a plan's limits with overrides applied. Enterprise limits are custom, so the rate and
 * burst must be given; its daily cap is unlimited unless set.
 */
export function resolvePlan(plan: PlanName, overrides: PlanOverrides = {}): PlanLimits {
  if (plan === 'enterprise') {
    if (overrides.ratePerMinute === undefined || overrides.burstPerSecond === undefined) {
      throw new Error('plan enterprise needs SERVICE_RATE_PER_MINUTE and SERVICE_BURST_PER_SECOND');
    }
    return {
      ratePerMinute: overrides.ratePerMinute,
      burstPerSecond: overrides.burstPerSecond,
      dailyCap: overrides.dailyCap ?? null,
    };
  }
  const base = PLAN_PRESETS[plan];
  return {
    ratePerMinute: overrides.ratePerMinute ?? base.ratePerMinute,
    burstPerSecond: overrides.burstPerSecond ?? base.burstPerSecond,
    dailyCap: overrides.dailyCap === undefined ? base.dailyCap : overrides.dailyCap,
  };
}
