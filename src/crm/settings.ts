/**
 * The settings the CRM adapters are built from. src/config parses them (HUBSPOT_*, SALESFORCE_*)
 * into AppConfig and the caller passes them in; the adapters never read configuration themselves.
 */
import type { CrmName } from './types.js';

export interface HubSpotConfig {
  baseUrl: string;
  /** HubSpot's date version, e.g. 2026-09 (HUBSPOT_API_VERSION; the adapter's default when unset). */
  apiVersion?: string | undefined;
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  refreshToken?: string | undefined;
  /** For console links to records (https://app.hubspot.com/contacts/{portalId}/record/...). */
  portalId?: string | undefined;
}

export interface SalesforceConfig {
  instanceUrl?: string | undefined;
  loginUrl: string;
  accessToken?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  refreshToken?: string | undefined;
  username?: string | undefined;
  jwtPrivateKey?: string | undefined;
  apiVersion: string;
  /** Hold after REQUEST_LIMIT_EXCEEDED or once the reserve is reached (default 15 min). */
  limitPauseMs?: number | undefined;
}

/** The part of AppConfig that chooses and builds the CRM adapter (factory.ts, credentials.ts). */
export interface CrmSettings {
  crm: CrmName;
  hubspot: HubSpotConfig;
  salesforce: SalesforceConfig;
}
