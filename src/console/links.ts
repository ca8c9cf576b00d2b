/**
 * Links from the console to the CRM records a call landed on.
 * HubSpot: https://app.hubspot.com/contacts/{portalId}/record/{objectTypeId}/{id}, with the object
 * type ids of HubSpot's object API guide (contacts 0-1, companies 0-2, deals 0-3, calls 0-48).
 * Salesforce: {instanceUrl}/lightning/r/{Object}/{id}/view; the id's 3-character key prefix names
 * the object (003 Contact, 00Q Lead, 001 Account, 006 Opportunity, 00T Task).
 * Against a sandbox (a non-default HUBSPOT_BASE_URL) links point at the configured base.
 */
import type { AppConfig } from '../config/config.js';

export type RecordKind = 'contact' | 'company' | 'deal' | 'activity';

export type RecordLinker = (kind: RecordKind, id: string) => string | null;

const HUBSPOT_API = 'https://api.hubapi.com';
const HUBSPOT_TYPE: Record<RecordKind, string> = {
  contact: '0-1',
  company: '0-2',
  deal: '0-3',
  activity: '0-48',
};
const SALESFORCE_PREFIX: Record<string, string> = {
  '003': 'Contact',
  '00Q': 'Lead',
  '001': 'Account',
  '006': 'Opportunity',
  '00T': 'Task',
};

export function recordLinker(config: Pick<AppConfig, 'crm' | 'hubspot' | 'salesforce'>): RecordLinker {
  if (config.crm === 'hubspot') {
    const base = config.hubspot.baseUrl.replace(/\/+$/, '');
    const sandbox = base !== HUBSPOT_API;
    const app = sandbox ? base : 'https://app.hubspot.com';
    // Without the account id there is no real HubSpot URL; a sandbox has a single account.
    const portal = config.hubspot.portalId ?? (sandbox ? '0' : undefined);
    if (portal === undefined) return () => null;
    return (kind, id) => `${app}/contacts/${portal}/record/${HUBSPOT_TYPE[kind]}/${encodeURIComponent(id)}`;
  }
  const instance = config.salesforce.instanceUrl?.replace(/\/+$/, '');
  if (!instance) return () => null;
  return (_kind, id) => {
    const object = SALESFORCE_PREFIX[id.slice(0, 3)];
    return object
      ? `${instance}/lightning/r/${object}/${encodeURIComponent(id)}/view`
      : `${instance}/${encodeURIComponent(id)}`;
  };
}
