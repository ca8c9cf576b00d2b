import type { Record as SfRecord } from 'jsforce';
import {
  DEFAULT_DEAL_RULE,
  type CrmLookup,
  type CrmRecord,
  type CrmRecordType,
  type DealRule,
  type LookupFields,
  type MatchedBy,
  type Participant,
} from '../types.js';
import { queryRecords, type SalesforceContext } from './context.js';
import { isFreeMailDomain } from './freemail.js';
import {
  dealOrderBy,
  domainMatchesWebsite,
  emailDomain,
  isSalesforceId,
  related,
  selectList,
  soqlLikeContains,
  soqlString,
} from './soql.js';

/** Candidate accounts read per domain search before matching their Website host exactly. */
export const DOMAIN_CANDIDATES = 20;

/** A value at a (possibly dotted) field path, matching names case-insensitively as Salesforce does. */
function valueAt(rec: SfRecord, path: string): unknown {
  let cur: unknown = rec;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return null;
    const obj = cur as Record<string, unknown>;
    const key = Object.keys(obj).find((k) => k.toLowerCase() === seg.toLowerCase());
    cur = key === undefined ? null : obj[key];
  }
  return cur ?? null;
}

export function toRecord(type: CrmRecordType, id: string, rec: SfRecord, names: string[]): CrmRecord {
  return { type, id, properties: Object.fromEntries(names.map((n) => [n, valueAt(rec, n)])) };
}

/** The related record a relationship field returned (`Account`, `Owner`), with its id. */
export function relatedRecord(
  type: CrmRecordType,
  id: unknown,
  rec: SfRecord,
  relationship: string,
  names: string[],
) {
  if (!isSalesforceId(id)) return null;
  const nested = valueAt(rec, relationship);
  return toRecord(type, id, nested && typeof nested === 'object' ? (nested as SfRecord) : {}, names);
}

async function openDeals(
  ctx: SalesforceContext,
  accountId: string,
  fields: string[],
  rule: DealRule,
): Promise<CrmRecord[]> {
  const limit = Math.min(200, Math.max(1, Math.floor(rule.limit)));
  const rows = await queryRecords(
    ctx,
    'open opportunities',
    `SELECT ${selectList(['Id', ...fields])} FROM Opportunity WHERE AccountId = ${soqlString(accountId)} ` +
      `AND IsClosed = false ORDER BY ${dealOrderBy(rule)} LIMIT ${limit}`,
  );
  return rows.map((r) => toRecord('deal', String(r.Id), r, fields));
}

interface AccountMatch {
  company: CrmRecord;
  owner: CrmRecord | null;
  matchedBy: MatchedBy;
}

/** An account by the email's domain (never a free-mail one), else by company name. */
async function findAccount(
  ctx: SalesforceContext,
  domain: string | undefined,
  companyName: string | undefined,
  fields: LookupFields,
): Promise<AccountMatch | null> {
  const cols = selectList(['Id', 'Website', 'OwnerId', ...fields.company, ...related('Owner', fields.owner)]);
  const match = (rec: SfRecord, matchedBy: MatchedBy): AccountMatch => ({
    company: toRecord('company', String(rec.Id), rec, fields.company),
    owner: relatedRecord('owner', rec.OwnerId, rec, 'Owner', fields.owner),
    matchedBy,
  });
  if (domain && !isFreeMailDomain(domain)) {
    const rows = await queryRecords(
      ctx,
      'account by domain',
      `SELECT ${cols} FROM Account WHERE Website LIKE ${soqlLikeContains(domain)} ` +
        `ORDER BY LastModifiedDate DESC LIMIT ${DOMAIN_CANDIDATES}`,
    );
    // LIKE finds "notacme.example" for acme.example too: keep only the same host or a subdomain.
    const hit = rows.find((r) => typeof r.Website === 'string' && domainMatchesWebsite(domain, r.Website));
    if (hit) return match(hit, 'domain');
  }
  const name = companyName?.trim();
  if (name) {
    const [hit] = await queryRecords(
      ctx,
      'account by name',
      `SELECT ${cols} FROM Account WHERE Name = ${soqlString(name)} ORDER BY LastModifiedDate DESC LIMIT 1`,
    );
    if (hit) return match(hit, 'company_name');
  }
  return null;
}

/** A lead's owner may be a queue; only users are returned as owners. */
async function userOwner(
  ctx: SalesforceContext,
  ownerId: unknown,
  fields: string[],
): Promise<CrmRecord | null> {
  if (!isSalesforceId(ownerId) || !ownerId.startsWith('005')) return null;
  if (fields.length === 0) return { type: 'owner', id: ownerId, properties: {} };
  const [user] = await queryRecords(
    ctx,
    'lead owner',
    `SELECT ${selectList(['Id', ...fields])} FROM User WHERE Id = ${soqlString(ownerId)} LIMIT 1`,
  );
  return user ? toRecord('owner', ownerId, user, fields) : null;
}

/**
 * Contact by email (Salesforce compares text case-insensitively), else an unconverted lead by
 * email, else an account by email domain or company name; then that account's open opportunities
 * in the deal rule's order. A contact costs two requests: its account and owner come back through
 * relationship fields of the same query.
 */
export async function lookupParticipant(
  ctx: SalesforceContext,
  participant: Participant,
  fields: LookupFields,
  rule: DealRule = DEFAULT_DEAL_RULE,
): Promise<CrmLookup> {
  const email = participant.email.trim();
  const domain = emailDomain(email);
  const withDeals = async (company: CrmRecord | null) =>
    company ? await openDeals(ctx, company.id, fields.deal, rule) : [];

  if (domain) {
    const [contact] = await queryRecords(
      ctx,
      'contact by email',
      `SELECT ${selectList([
        'Id',
        'AccountId',
        'OwnerId',
        ...fields.contact,
        ...related('Account', fields.company),
        ...related('Owner', fields.owner),
      ])} FROM Contact WHERE Email = ${soqlString(email)} ORDER BY LastModifiedDate DESC LIMIT 1`,
    );
    if (contact) {
      const company = relatedRecord('company', contact.AccountId, contact, 'Account', fields.company);
      return {
        contact: toRecord('contact', String(contact.Id), contact, fields.contact),
        company,
        deals: await withDeals(company),
        owner: relatedRecord('owner', contact.OwnerId, contact, 'Owner', fields.owner),
        matchedBy: 'email',
      };
    }
    const [lead] = await queryRecords(
      ctx,
      'lead by email',
      `SELECT ${selectList(['Id', 'OwnerId', 'Company', ...fields.lead])} FROM Lead ` +
        `WHERE Email = ${soqlString(email)} AND IsConverted = false ORDER BY LastModifiedDate DESC LIMIT 1`,
    );
    if (lead) {
      const company = typeof lead.Company === 'string' ? lead.Company : participant.company;
      const account = await findAccount(ctx, domain, company, fields);
      return {
        contact: toRecord('lead', String(lead.Id), lead, fields.lead),
        company: account?.company ?? null,
        deals: await withDeals(account?.company ?? null),
        owner: await userOwner(ctx, lead.OwnerId, fields.owner),
        matchedBy: 'lead_email',
      };
    }
  }
  const account = await findAccount(ctx, domain, participant.company, fields);
  if (!account) return { contact: null, company: null, deals: [], owner: null, matchedBy: 'none' };
  return { ...account, contact: null, deals: await withDeals(account.company) };
}
