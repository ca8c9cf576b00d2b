export { createRequestBudget, DEFAULT_SAFETY_MARGIN_MS, type RequestBudgetDeps } from './budget.js';
export { BudgetClosedError } from './errors.js';
export { InMemorySlotLedger } from './ledger.js';
export { LiveReserve, type LiveReserveOptions } from './liveReserve.js';
export {
  PLAN_NAMES,
  PLAN_PRESETS,
  resolvePlan,
  type PlanLimits,
  type PlanName,
  type PlanOverrides,
} from './plans.js';
export {
  DailyCapReachedError,
  PRIORITIES,
  type BudgetStats,
  type LedgerSnapshot,
  type Priority,
  type RequestBudget,
  type RunOptions,
  type SlotGrant,
  type SlotGrants,
  type SlotLedger,
  type SlotRequest,
} from './types.js';
