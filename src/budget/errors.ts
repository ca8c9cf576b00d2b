/** Rejected by the budget for requests still waiting when it closes, and for any run after. */
export class BudgetClosedError extends Error {
  readonly code = 'BUDGET_CLOSED';
  constructor() {
    super('request budget closed');
    this.name = 'BudgetClosedError';
  }
}
