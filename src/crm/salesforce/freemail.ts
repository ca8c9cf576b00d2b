// The list is shared by every adapter: see src/crm/freemail.ts.
export { FREE_MAIL_DOMAINS, isFreeMailDomain } from '../freemail.js';
