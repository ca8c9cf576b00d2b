/** Sent in the User-Agent and shown by `crm-sync --version`; keep in step with package.json. */
export const VERSION = '0.1.0';
export const USER_AGENT = `crm-sync/${VERSION} (+https://github.com/crm-sync/crm-sync)`;
