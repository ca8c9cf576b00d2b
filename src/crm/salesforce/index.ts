export {
  createSalesforceAdapter,
  DEFAULT_KEY_FIELDS,
  type SalesforceAdapter,
  type SalesforceAdapterDeps,
} from './adapter.js';
export { DEFAULT_BUDGET, type ApiBudgetOptions } from './budget.js';
export { FREE_MAIL_DOMAINS, isFreeMailDomain } from './freemail.js';
export { signJwtAssertion } from './jwt.js';
export type { KeyFields } from './writes.js';
