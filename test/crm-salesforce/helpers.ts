import { generateKeyPairSync } from 'node:crypto';
import type { SalesforceConfig } from '../../src/crm/settings.js';
import { DEFAULT_API_VERSION } from '../../src/crm/salesforce/apiVersions.js';
import type { LookupFields } from '../../src/crm/types.js';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';

/** Lookup fields as a mapping file would ask for them. */
export const FIELDS: LookupFields = {
  contact: ['FirstName', 'LastName', 'Email', 'Title'],
  lead: ['FirstName', 'LastName', 'Email', 'Company', 'Status'],
  company: ['Name', 'Website', 'Industry'],
  deal: ['Name', 'StageName', 'CloseDate', 'Amount'],
  owner: ['Name', 'Email'],
};

/** Access-token configuration pointing at the sandbox; override to pick another auth flow. */
export function sandboxConfig(sb: SalesforceSandbox, over: Partial<SalesforceConfig> = {}): SalesforceConfig {
  return {
    instanceUrl: sb.url,
    loginUrl: sb.url,
    accessToken: sb.accessToken,
    apiVersion: DEFAULT_API_VERSION,
    ...over,
  };
}

export interface RequestLog {
  total: number;
  counts: Record<string, number>;
  /** The latest requests, oldest first. */
  recent: { method: string; path: string; status: number }[];
}

/** Reads the sandbox's request counters through its admin API. */
export async function requestCounts(sb: SalesforceSandbox): Promise<RequestLog> {
  const res = await fetch(`${sb.url}/_admin/requests`);
  return (await res.json()) as RequestLog;
}

export async function adminRecords(sb: SalesforceSandbox, type: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${sb.url}/_admin/records/${type}`);
  return (await res.json()) as Record<string, unknown>[];
}

export async function adminPost(sb: SalesforceSandbox, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${sb.url}/_admin/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status}`);
}

export const QUERY = `/services/data/v${DEFAULT_API_VERSION}/query`;

let keys: { publicKeyPem: string; privateKeyPem: string } | undefined;

/** One RSA key pair per test process: generating one per sandbox costs most of a second. */
export function testJwtKeys(): { publicKeyPem: string; privateKeyPem: string } {
  if (!keys) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keys = {
      publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
  }
  return keys;
}
