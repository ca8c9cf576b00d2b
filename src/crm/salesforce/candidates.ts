/**
 * The Salesforce side of the match rules (src/crm/match/): fetches candidates with one SOQL query
 * per step for many participants (`Email IN`, OR-ed `Website LIKE`, `Name IN`, `AccountId IN`).
 * A contact's account and owner come back through relationship fields of the contact query, so a
 * contact with an account costs two requests in all. Opportunities belong to accounts here
 * (OpportunityContactRole is not read), so a contact's deals are its account's open ones.
 */
import type { Record as SfRecord } from 'jsforce';
import {
  fullName,
  numberOf,
  textOf,
  timeOf,
  type CandidateSource,
  type CompanyCandidate,
  type CompanyLink,
  type DealCandidate,
  type PersonCandidate,
} from '../match/candidates.js';
import type { CrmRecord, CrmRecordType, DealRule, LookupFields } from '../types.js';
import type { SalesforceContext } from './context.js';
import { dealOrderBy, isSalesforceId, related, selectList, soqlLikeContains, soqlString } from './soql.js';
import { firstRowsPer, type BatchQuery } from './soqlBatch.js';

/** Candidate accounts read per domain search before matching their Website host exactly. */
export const DOMAIN_CANDIDATES = 20;
/** Records with one address or one name read to choose among (and to name those not chosen). */
export const SAME_KEY_CANDIDATES = 5;

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

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : undefined);
/** Users own records; a lead may also be owned by a queue (a Group, id prefix 00G). */
const isUserId = (id: unknown): id is string => isSalesforceId(id) && id.startsWith('005');

export function salesforceCandidates(ctx: SalesforceContext, fields: LookupFields): CandidateSource {
  /** Owners seen in relationship fields, so most owners need no query of their own. */
  const seenOwners = new Map<string, CrmRecord>();
  /** Contacts' accounts, as the contact query returned them. */
  const accountOf = new Map<string, CompanyCandidate>();

  const ownerCols = related('Owner', fields.owner);
  const accountCols = ['Id', 'Name', 'Website', 'OwnerId', 'LastModifiedDate', ...fields.company];
  const remember = (ownerId: unknown, rec: SfRecord | null) => {
    if (!isUserId(ownerId) || !rec) return;
    const nested = valueAt(rec, 'Owner');
    const o = nested && typeof nested === 'object' ? (nested as SfRecord) : {};
    seenOwners.set(ownerId, toRecord('owner', ownerId, o, fields.owner));
  };
  const account = (rec: SfRecord): CompanyCandidate => {
    remember(rec.OwnerId, rec);
    return {
      record: toRecord('company', String(rec.Id), rec, fields.company),
      name: textOf(rec.Name),
      website: textOf(rec.Website),
      modifiedAt: timeOf(rec.LastModifiedDate),
      ownerId: isUserId(rec.OwnerId) ? rec.OwnerId : null,
    };
  };
  const query = (q: BatchQuery, terms: { key: string; term: string }[]) => firstRowsPer(ctx, q, terms);
  const byEmail = (label: string, soql: (terms: string) => string): BatchQuery => ({
    label,
    soql,
    joiner: ', ',
    matches: (row, key) => lower(row.Email) === key,
    need: SAME_KEY_CANDIDATES,
  });
  const emailTerms = (emails: string[]) => emails.map((e) => ({ key: e, term: soqlString(e) }));

  return {
    crm: 'salesforce',
    async contactsByEmail(emails) {
      const cols = selectList([
        'Id',
        'AccountId',
        'OwnerId',
        'Email',
        'FirstName',
        'LastName',
        'LastModifiedDate',
        ...fields.contact,
        ...related('Account', accountCols),
        ...related('Account', related('Owner', fields.owner)),
        ...ownerCols,
      ]);
      // Salesforce compares text case-insensitively; the addresses are lower-cased already.
      const rows = await query(
        byEmail(
          'contacts by email',
          (t) => `SELECT ${cols} FROM Contact WHERE Email IN (${t}) ORDER BY LastModifiedDate DESC`,
        ),
        emailTerms(emails),
      );
      return mapRows(rows, (c) => {
        remember(c.OwnerId, c);
        const acct = valueAt(c, 'Account');
        if (isSalesforceId(c.AccountId) && acct && typeof acct === 'object') {
          accountOf.set(String(c.Id), account({ ...(acct as SfRecord), Id: c.AccountId }));
        }
        return {
          record: toRecord('contact', String(c.Id), c, fields.contact),
          name: fullName(c.FirstName, c.LastName),
          modifiedAt: timeOf(c.LastModifiedDate),
          ownerId: isUserId(c.OwnerId) ? c.OwnerId : null,
        };
      });
    },
    async leadsByEmail(emails) {
      const cols = selectList([
        'Id',
        'OwnerId',
        'Company',
        'Email',
        'FirstName',
        'LastName',
        'LastModifiedDate',
        ...fields.lead,
      ]);
      const rows = await query(
        byEmail(
          'leads by email',
          (t) =>
            `SELECT ${cols} FROM Lead WHERE Email IN (${t}) AND IsConverted = false ORDER BY LastModifiedDate DESC`,
        ),
        emailTerms(emails),
      );
      return mapRows(rows, (l) => ({
        record: toRecord('lead', String(l.Id), l, fields.lead),
        name: fullName(l.FirstName, l.LastName),
        modifiedAt: timeOf(l.LastModifiedDate),
        ownerId: isUserId(l.OwnerId) ? l.OwnerId : null,
        ownedByQueue: isSalesforceId(l.OwnerId) && !isUserId(l.OwnerId),
        companyName: textOf(l.Company),
      }));
    },
    async companiesOfContacts(contacts: PersonCandidate[]) {
      const out = new Map<string, CompanyLink[]>();
      for (const c of contacts) {
        const a = accountOf.get(c.record.id);
        // A contact has one account (Contact.AccountId): it is the primary one.
        out.set(c.record.id, a ? [{ company: a, primary: true }] : []);
      }
      return out;
    },
    dealsOfContacts: async () => new Map(),
    async companiesByDomain(domains) {
      const rows = await query(
        {
          label: 'accounts by domain',
          soql: (t) =>
            `SELECT ${selectList([...accountCols, ...ownerCols])} FROM Account WHERE ${t} ORDER BY LastModifiedDate DESC`,
          joiner: ' OR ',
          // LIKE '%domain%' ignores case; the domain is lower-case already.
          matches: (row, domain) => lower(row.Website)?.includes(domain) === true,
          need: DOMAIN_CANDIDATES,
        },
        domains.map((d) => ({ key: d, term: `Website LIKE ${soqlLikeContains(d)}` })),
      );
      return mapRows(rows, account);
    },
    async companiesByName(names) {
      const rows = await query(
        {
          label: 'accounts by name',
          soql: (t) =>
            `SELECT ${selectList([...accountCols, ...ownerCols])} FROM Account WHERE Name IN (${t}) ORDER BY LastModifiedDate DESC`,
          joiner: ', ',
          matches: (row, name) => lower(row.Name) === name,
          need: SAME_KEY_CANDIDATES,
        },
        names.map((n) => ({ key: n, term: soqlString(n) })),
      );
      return mapRows(rows, account);
    },
    async dealsOfCompanies(ids: string[], rule: DealRule) {
      const cols = [
        'Id',
        'AccountId',
        'Name',
        'StageName',
        'CloseDate',
        'Amount',
        'LastModifiedDate',
        'OwnerId',
        ...fields.deal,
        ...ownerCols,
      ];
      // Only open ones, cut in the rule's order: an account may hold thousands of closed deals.
      const rows = await query(
        {
          label: 'open opportunities',
          soql: (t) =>
            `SELECT ${selectList(cols)} FROM Opportunity WHERE AccountId IN (${t}) AND IsClosed = false ` +
            `ORDER BY ${dealOrderBy(rule)}`,
          joiner: ', ',
          matches: (row, id) => row.AccountId === id,
          need: Math.min(200, Math.max(1, Math.floor(rule.limit))),
        },
        ids.map((id) => ({ key: id, term: soqlString(id) })),
      );
      return mapRows(rows, (r): DealCandidate => {
        remember(r.OwnerId, r);
        return {
          record: toRecord('deal', String(r.Id), r, fields.deal),
          name: textOf(r.Name),
          open: true,
          stage: textOf(r.StageName),
          closeDate: timeOf(r.CloseDate),
          amount: numberOf(r.Amount),
          modifiedAt: timeOf(r.LastModifiedDate),
          ownerId: isUserId(r.OwnerId) ? r.OwnerId : null,
        };
      });
    },
    async owners(ids) {
      const out = new Map<string, CrmRecord | null>();
      const missing = ids.filter((id) => {
        const seen = seenOwners.get(id);
        if (seen) out.set(id, seen);
        else if (!isUserId(id)) out.set(id, null);
        return !seen && isUserId(id);
      });
      if (fields.owner.length === 0) {
        for (const id of missing) out.set(id, { type: 'owner', id, properties: {} });
        return out;
      }
      // 15- and 18-character forms of one id share their first 15 characters.
      const id15 = (id: unknown) => (typeof id === 'string' ? id.slice(0, 15) : '');
      const users = await query(
        {
          label: 'owners',
          soql: (t) => `SELECT ${selectList(['Id', ...fields.owner])} FROM User WHERE Id IN (${t})`,
          joiner: ', ',
          matches: (row, id) => id15(row.Id) === id,
          need: 1,
        },
        missing.map((id) => ({ key: id15(id), term: soqlString(id) })),
      );
      for (const id of missing) {
        const [user] = users.get(id15(id)) ?? [];
        out.set(id, user ? toRecord('owner', id, user, fields.owner) : null);
      }
      return out;
    },
  };
}

function mapRows<T>(rows: Map<string, SfRecord[]>, f: (r: SfRecord) => T): Map<string, T[]> {
  return new Map([...rows].map(([k, list]) => [k, list.map(f)]));
}
