export { createHubSpotAdapter, type HubSpotAdapterDeps } from './adapter.js';
export type { HubSpotCredentials, TokenGrant, RefreshFn } from './auth.js';
export type { GateOptions } from './gate.js';
export type { RetryPolicy } from './retry.js';
export { FREE_MAIL_DOMAINS, emailDomain, isFreeMailDomain } from './freemail.js';
export { isOpenDeal } from './dealRule.js';
export { toCrmError } from './errorMap.js';
