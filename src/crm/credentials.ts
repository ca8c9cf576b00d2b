/**
 * Which CRM credential the worker uses, and what an operator does when the CRM rejects it (pure).
 * The advice names settings, never their values: it goes to logs, /readyz and `crm-sync status`.
 */
import { authMode } from './salesforce/authMode.js';
import type { CrmSettings } from './settings.js';
import type { CrmName } from './types.js';

export interface CredentialAdvice {
  crm: CrmName;
  /** e.g. "HubSpot access token". */
  credential: string;
  /** What to do when it is rejected. */
  fix: string;
}

export function credentialAdvice(config: CrmSettings): CredentialAdvice {
  if (config.crm === 'hubspot') {
    const h = config.hubspot;
    // With OAuth set up, a rejected access token is refreshed; only a refused refresh reaches here.
    if (h.clientId && h.clientSecret && h.refreshToken) {
      return {
        crm: 'hubspot',
        credential: 'HubSpot OAuth refresh token',
        fix: 'reinstall the app in HubSpot and set the new HUBSPOT_REFRESH_TOKEN (check HUBSPOT_CLIENT_ID and HUBSPOT_CLIENT_SECRET)',
      };
    }
    return {
      crm: 'hubspot',
      credential: 'HubSpot access token',
      fix: 'rotate or create a HubSpot Service Key (docs/install.md, section 1) and set HUBSPOT_ACCESS_TOKEN',
    };
  }
  switch (authMode(config.salesforce)) {
    case 'refresh_token':
      return {
        crm: 'salesforce',
        credential: 'Salesforce refresh token',
        fix: 'authorize the app (External Client App or connected app) again and set SALESFORCE_REFRESH_TOKEN (check SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET)',
      };
    case 'jwt_bearer':
      return {
        crm: 'salesforce',
        credential: 'Salesforce JWT bearer grant',
        fix: 'pre-authorize SALESFORCE_USERNAME for the app (External Client App or connected app) and check that SALESFORCE_JWT_PRIVATE_KEY matches its certificate',
      };
    case 'client_credentials':
      return {
        crm: 'salesforce',
        credential: 'Salesforce client credentials grant',
        fix: "check SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET (the External Client App's consumer key and secret), that the app has Enable Client Credentials Flow on with a Run As user, and that SALESFORCE_LOGIN_URL is the org's My Domain",
      };
    case 'access_token':
      return {
        crm: 'salesforce',
        credential: 'Salesforce access token',
        fix: 'set a new SALESFORCE_ACCESS_TOKEN, or set up the client credentials or JWT bearer flow so the worker can renew it',
      };
  }
}

/** e.g. "HubSpot access token rejected (401): rotate or create a HubSpot Service Key (...) and set HUBSPOT_ACCESS_TOKEN". */
export function rejectionMessage(advice: CredentialAdvice, status?: number): string {
  return `${advice.credential} rejected${status ? ` (${status})` : ''}: ${advice.fix}`;
}
