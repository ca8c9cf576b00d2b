import type { SalesforceConfig } from '../../config/config.js';

export type AuthMode = 'access_token' | 'refresh_token' | 'jwt_bearer';

/**
 * Which Salesforce flow the settings ask for. Apart from session.ts so that credential advice
 * (loaded by every worker) does not load jsforce.
 */
export function authMode(config: SalesforceConfig): AuthMode {
  if (config.clientId && config.refreshToken) return 'refresh_token';
  if (config.clientId && config.username && config.jwtPrivateKey) return 'jwt_bearer';
  if (config.accessToken && config.instanceUrl) return 'access_token';
  throw new Error(
    'Salesforce credentials incomplete: set an access token with its instance URL, the refresh-token flow, or the JWT bearer flow',
  );
}
