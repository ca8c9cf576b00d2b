/**
 * What the match rules decided for one participant, and why (src/crm/match/decide.ts). Stored on
 * the call (`sync_status.match_decision`), printed by `crm-sync status --call` and `crm-sync match`,
 * shown on the console's call page. Plain data: it round-trips through JSON.
 */
import type { CrmName, CrmRecordType, MatchedBy } from '../types.js';

/** The rule that found a record. */
export type MatchRule =
  /** contact (or lead) */
  | 'contact_email'
  | 'lead_email'
  /** company */
  | 'contact_company'
  | 'email_domain'
  | 'company_name'
  /** deal */
  | 'contact_open_deal'
  | 'company_open_deal'
  /** nothing found */
  | 'none';

/** A candidate that was not chosen, and why. */
export interface MatchLoser {
  id: string;
  label: string;
  reason: string;
}

/** One slot of the decision (contact, company or deal). */
export interface MatchChoice {
  type: CrmRecordType;
  /** The chosen record's id, or null when none was chosen. */
  id: string | null;
  /** A name to show (the contact's name, the company's or deal's name); never an email address. */
  label: string | null;
  rule: MatchRule;
  /** One plain sentence: why this record (or why none). */
  reason: string;
  rejected: MatchLoser[];
}

export interface MatchDecision {
  crm: CrmName;
  /** The summary the rest of the worker uses (contact > domain > name). */
  matchedBy: MatchedBy;
  contact: MatchChoice;
  company: MatchChoice;
  deal: MatchChoice;
}
