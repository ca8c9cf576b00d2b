/**
 * What the match rules choose from. Each CRM adapter fetches these (src/crm/hubspot/candidates.ts,
 * src/crm/salesforce/candidates.ts), singly or in batches; the rules (decide.ts) never see the
 * CRM's own shapes, only these normalised facts and the record to hand on.
 */
import type { CrmName, CrmRecord, DealRule } from '../types.js';

export interface PersonCandidate {
  /** A contact, or (Salesforce) a lead. */
  record: CrmRecord;
  /** Full name, for reasons and the console; null when the CRM has none. */
  name: string | null;
  modifiedAt: number | null;
  ownerId: string | null;
  /** Owned by a queue (a Salesforce lead waiting for assignment): no person owns it yet. */
  ownedByQueue?: boolean | undefined;
  /** A lead's own company text (Salesforce `Lead.Company`), used for the company-name rule. */
  companyName?: string | null | undefined;
}

export interface CompanyCandidate {
  record: CrmRecord;
  name: string | null;
  /** The host its domain or website names (`https://www.acme.example/` → `www.acme.example`). */
  website: string | null;
  modifiedAt: number | null;
  ownerId: string | null;
}

/** A company linked to a contact; `primary` where the CRM marks one as the contact's main company. */
export interface CompanyLink {
  company: CompanyCandidate;
  primary: boolean;
}

export interface DealCandidate {
  record: CrmRecord;
  name: string | null;
  open: boolean;
  /** Stage as the CRM names it, for reasons ("closed: closedwon"). */
  stage: string | null;
  closeDate: number | null;
  amount: number | null;
  modifiedAt: number | null;
  /** The deal's owner (a user id), resolved with the contact's owner into `CrmRecord.owner`. */
  ownerId: string | null;
}

/**
 * The fetches behind the rules, each for many keys at once. Keys: emails as `lookupKey` gives them,
 * domains lower-case, company names lower-case, record ids as the CRM gives them.
 */
export interface CandidateSource {
  readonly crm: CrmName;
  contactsByEmail(emails: string[]): Promise<Map<string, PersonCandidate[]>>;
  /** Unconverted leads (Salesforce); a CRM without leads answers an empty map. */
  leadsByEmail(emails: string[]): Promise<Map<string, PersonCandidate[]>>;
  /** The companies each contact is linked to, keyed by contact id. */
  companiesOfContacts(contacts: PersonCandidate[]): Promise<Map<string, CompanyLink[]>>;
  /** Deals each contact is linked to (open and closed), keyed by contact id. */
  dealsOfContacts(contactIds: string[]): Promise<Map<string, DealCandidate[]>>;
  /** Companies whose domain or website may be this domain (the rules check the host exactly). */
  companiesByDomain(domains: string[]): Promise<Map<string, CompanyCandidate[]>>;
  /** Companies with this name, compared without regard to case. */
  companiesByName(names: string[]): Promise<Map<string, CompanyCandidate[]>>;
  /** Each company's deals; a source may leave closed ones out or cut the list in the rule's order. */
  dealsOfCompanies(companyIds: string[], rule: DealRule): Promise<Map<string, DealCandidate[]>>;
  /** Owners by id; null for one that is not an active user. */
  owners(ids: string[]): Promise<Map<string, CrmRecord | null>>;
}

/** Epoch ms of an ISO date, an epoch-ms string or number; null for anything else. */
export function timeOf(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const s = String(value);
  const t = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  return Number.isFinite(t) ? t : null;
}

/** A finite number, or null for empty and non-numeric values. */
export function numberOf(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** Non-blank text, trimmed; null otherwise. */
export function textOf(value: unknown): string | null {
  if (typeof value !== 'string') return value === null || value === undefined ? null : String(value);
  const t = value.trim();
  return t === '' ? null : t;
}

/** "First Last" from parts that may be null or blank. */
export function fullName(...parts: unknown[]): string | null {
  const name = parts.flatMap((p) => textOf(p) ?? []).join(' ');
  return name === '' ? null : name;
}
