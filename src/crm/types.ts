/**
 * The one CRM adapter port. HubSpot (src/crm/hubspot/) and Salesforce (src/crm/salesforce/)
 * implement it through their official SDKs; everything above it (pipelines, mapping, CLI) is
 * CRM-neutral. Field names inside `properties` are the CRM's own (e.g. `hs_call_title`,
 * `CrmSync_Score_Overall__c`); the mapping files (config/mappings/) decide them.
 */

export type CrmName = 'hubspot' | 'salesforce';

export interface Participant {
  email: string;
  name?: string | undefined;
  company?: string | undefined;
}

export type CrmRecordType = 'contact' | 'lead' | 'company' | 'deal' | 'owner';

/** A CRM record as read, with the properties asked for (CRM field names) and its id. */
export interface CrmRecord {
  type: CrmRecordType;
  id: string;
  properties: Record<string, unknown>;
  /** Deals: the deal's owner, read with the other owners of the lookup; null when not an active user. */
  owner?: CrmRecord | null | undefined;
}

export type MatchedBy = 'email' | 'lead_email' | 'domain' | 'company_name' | 'none';

/*
 * What the match rules decided for one participant, and why (src/crm/match/decide.ts). Stored on
 * the call (`sync_status.match_decision`), shown by `status --call`, `match` and the console.
 * Plain data: it round-trips through JSON.
 */

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

export interface CrmLookup {
  /** The participant's contact, or (Salesforce) lead when there is no contact. */
  contact: CrmRecord | null;
  /** The contact's company/account, else one found by email domain or company name. */
  company: CrmRecord | null;
  /** Open deals/opportunities, already ordered by the deal rule; the first is the call's deal. */
  deals: CrmRecord[];
  /** Owner of the contact (or of the company when there is no contact). */
  owner: CrmRecord | null;
  matchedBy: MatchedBy;
  /** Why these records: each rule's choice, the candidates that lost and why (src/crm/match/). */
  decision?: MatchDecision | undefined;
}

/** Which CRM properties the lookup must read for each record type (from the mapping file). */
export interface LookupFields {
  contact: string[];
  lead: string[];
  company: string[];
  deal: string[];
  owner: string[];
}

/** How to choose among several open deals. Default: soonest close date, then last modified. */
export interface DealRule {
  orderBy: 'close_date_asc' | 'close_date_desc' | 'amount_desc' | 'last_modified_desc';
  /** Ties on `orderBy` broken by the most recently modified. */
  limit: number;
}

export const DEFAULT_DEAL_RULE: DealRule = { orderBy: 'close_date_asc', limit: 5 };

/** The key of a participant in `lookupMany`'s result: the address trimmed and lower-cased. */
export function lookupKey(email: string): string {
  return email.trim().toLowerCase();
}

/** The records a call's activity is attached to (ids from the lookup). */
export interface ActivityLinks {
  contactId?: string | undefined;
  /** Salesforce only: whether contactId is a Contact or a Lead (a Task on a Lead has no WhatId). */
  contactType?: 'contact' | 'lead' | undefined;
  companyId?: string | undefined;
  dealId?: string | undefined;
}

/** Moving a written activity to the records a new match decision chose (`rematch`; plan in src/crm/relink.ts). */
export interface LinkMove {
  /** The Service call id: the key of the result. */
  callId: string;
  /** The record's CRM id: the activity's (HubSpot call engagement, Salesforce Task), or a draft's. */
  activityId: string;
  /**
   * Which record moves: the call's activity (default), or one of its follow-up drafts of that kind
   * (`rematch` moves the drafts with the activity).
   */
  record?: 'activity' | 'note' | 'task' | 'email' | undefined;
  /** The records the last decision linked it to. */
  from: ActivityLinks;
  /** The records the new decision chose. */
  to: ActivityLinks;
  /**
   * Make its links equal `to`: every other contact, company or deal link is removed, not only
   * those `from` names. A re-write does this (src/crm/hubspot/writeback.ts); rematch does not.
   */
  exact?: boolean | undefined;
}

export type LinkMoveResult =
  | {
      key: string;
      ok: true;
      /** CRM writes the move took (or would take, dry run); 0 when the CRM already showed the new links. */
      writes: number;
    }
  | { key: string; ok: false; error: Error };

export interface MoveOptions {
  /** Read the current links and count the writes, but send none. */
  dryRun?: boolean | undefined;
}

/** One call's activity, already mapped to CRM properties. Upserted on the call id. */
export interface ActivityWrite {
  /** The Service call id: stored in the external-id field, the upsert key. */
  callId: string;
  /** The external-id field (from the mapping's `id_field`); `properties` holds it set to `callId`. */
  idField?: string | undefined;
  properties: Record<string, string | number | boolean | null>;
  links: ActivityLinks;
}

/**
 * One follow-up draft, already mapped. Upserted on `key` (call id and draft id, src/crm/draftKey.ts)
 * so a replay adds nothing and drafts of two calls never share a record.
 */
export interface FollowupWrite {
  callId: string;
  draftId: string;
  /** The upsert key, unique across calls; batches dedupe and answer by it (WriteResult.key). */
  key: string;
  /** 'note' | 'task' (HubSpot) or 'email' | 'task' (Salesforce), from the mapping. */
  kind: 'note' | 'task' | 'email';
  /** The external-id field (from the mapping's `id_field`); `properties` holds it set to `key`. */
  idField?: string | undefined;
  properties: Record<string, string | number | boolean | null>;
  links: ActivityLinks;
  /** The call's activity, when the CRM can link the draft to it. */
  activityId?: string | undefined;
}

/**
 * One deal's signal fields (the mapping's `deal` section), already mapped: an update of the
 * existing deal/opportunity by its record id. `null` clears a field.
 */
export interface DealWrite {
  dealId: string;
  properties: Record<string, string | number | boolean | null>;
}

/** What the CRM already holds for one call, found by `findWritten`. */
export interface WrittenCall {
  /** The call's activity (HubSpot call engagement, Salesforce Task), when there is one. */
  activityId?: string | undefined;
  /** When follow-ups were asked for, as stamped on the activity (WrittenQuery.generatedAtField). */
  followupsGeneratedAt?: string | undefined;
  /** Follow-up drafts that carry the call id, each with its draft id (from either key form) and CRM record id. */
  followups: { draftId: string; crmId: string }[];
}

/** Where `findWritten` looks: the mapping's key fields. */
export interface WrittenQuery {
  /** The activity's external-id field (the mapping's `id_field`); the adapter's default if unset. */
  activityIdField?: string | undefined;
  /** The activity's follow-up generation stamp, read into `followupsGeneratedAt` (none: not read). */
  generatedAtField?: string | undefined;
  /**
   * The drafts' object and fields, when the mapping writes follow-ups and each draft carries its
   * call id (`callIdField`); without it only activities are found.
   */
  followups?: { kind: FollowupWrite['kind']; idField?: string | undefined; callIdField: string } | undefined;
}

export type WriteResult =
  { key: string; ok: true; id: string; created: boolean } | { key: string; ok: false; error: Error };

/** A custom field the mapping needs, for `doctor`. */
export interface FieldRequirement {
  object: string;
  name: string;
  type: 'string' | 'number' | 'text' | 'date' | 'datetime' | 'boolean';
  unique?: boolean | undefined;
  label?: string | undefined;
}

export interface SetupCheck {
  name: string;
  ok: boolean;
  /** Passed, but needs the admin's attention before it stops passing (e.g. an API version retiring). */
  warn?: boolean | undefined;
  detail: string;
  /** For a missing field: what the admin must create (Salesforce) or what `--fix` created (HubSpot). */
  fix?: string | undefined;
}

export interface SetupReport {
  ok: boolean;
  checks: SetupCheck[];
}

export interface CrmAdapter {
  readonly name: CrmName;
  /** Finds the participant's contact (or lead), company, open deals and owner. */
  lookup(participant: Participant, fields: LookupFields, rule?: DealRule): Promise<CrmLookup>;
  /**
   * Looks up many participants in a few batched requests (for write-back batches and backfills),
   * giving each the same result `lookup` would. Keyed by `lookupKey(participant.email)`; when two
   * participants share an address, the first one's name and company are used.
   */
  lookupMany(
    participants: Participant[],
    fields: LookupFields,
    rule?: DealRule,
  ): Promise<Map<string, CrmLookup>>;
  /**
   * Creates or updates each call's activity, keyed on the call id, and links it. Safe to repeat:
   * the same call written three times leaves one activity. Batches when given several.
   */
  upsertActivities(writes: ActivityWrite[]): Promise<WriteResult[]>;
  /** Creates or updates follow-up drafts, keyed on `FollowupWrite.key`, linked like the activity; results by that key. */
  upsertFollowups(writes: FollowupWrite[]): Promise<WriteResult[]>;
  /**
   * Updates deals (HubSpot deals, Salesforce Opportunities) by record id with their signal
   * fields, in batches; one result per write, keyed by deal id. Never creates a deal.
   */
  updateDeals(writes: DealWrite[]): Promise<WriteResult[]>;
  /**
   * The current values of `fields` on these deals, by deal id, in batched reads; deals the CRM
   * does not have are left out. Read after a process died mid-write, to not write twice.
   */
  readDeals(dealIds: string[], fields: string[]): Promise<Map<string, Record<string, unknown>>>;
  /**
   * One cheap request that proves the credentials work; throws CrmAuthError when the CRM rejects
   * them (other CrmErrors when it cannot tell). The worker probes with it while they are rejected.
   */
  checkCredentials(): Promise<void>;
  /**
   * What the CRM already holds for these calls: the activity and the follow-up drafts carrying
   * each call id, in a few batched requests (never one per call). Calls with nothing written are
   * left out of the map. The ledger of last resort when the local database lost its record.
   */
  findWritten(callIds: string[], query?: WrittenQuery): Promise<Map<string, WrittenCall>>;
  /**
   * Moves written activities from the records of an old match decision to a new one (`rematch`):
   * reads their current links in batches, then writes only what still differs (src/crm/relink.ts).
   * One result per move, in order; one activity's failure does not fail the others.
   */
  moveActivityLinks(moves: LinkMove[], options?: MoveOptions): Promise<LinkMoveResult[]>;
  /** Checks credentials and that the required custom fields exist with a fitting type. */
  verifySetup(required: FieldRequirement[], options?: { fix?: boolean }): Promise<SetupReport>;
  /** Budget counters for status and metrics. */
  usage(): CrmUsage;
}

export interface CrmUsage {
  requests: number;
  /** Last remaining quota the CRM reported (HubSpot daily remaining, Salesforce api-usage). */
  remaining?: number | undefined;
  limit?: number | undefined;
  rateLimitedUntil?: number | undefined;
}
