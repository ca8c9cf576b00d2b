import { CrmNotFoundError } from '../errors.js';
import type { CrmLookup, CrmRecord, DealRule, LookupFields, MatchedBy, Participant } from '../types.js';
import { chooseDeals } from './dealRule.js';
import { emailDomain, isFreeMailDomain } from './freemail.js';
import type { Runner } from './runner.js';
import type { OwnerInfo, SdkObject } from './sdk.js';

/**
 * Finds a participant in HubSpot: the contact by email (HubSpot has no leads), its company and
 * deals through v4 associations; with no contact (or a contact without a company), a company by
 * email domain (never a free-mail one), else by company name. Deals are the contact's, else the company's, open ones only,
 * ordered by the deal rule. The owner is the contact's, else the company's.
 */
export const CONTACT_PROPS = ['email', 'firstname', 'lastname', 'hubspot_owner_id'];
export const COMPANY_PROPS = ['name', 'domain', 'hubspot_owner_id'];
export const DEAL_PROPS = [
  'dealname',
  'dealstage',
  'pipeline',
  'amount',
  'closedate',
  'hs_is_closed',
  'hs_is_closed_won',
  'hs_lastmodifieddate',
  'hubspot_owner_id',
];
/** v4 association type ids marking a contact's or deal's primary company. */
export const PRIMARY_COMPANY_TYPES = new Set([1, 5]);
export const BATCH_READ_MAX = 100;

export async function lookupParticipant(
  run: Runner,
  participant: Participant,
  fields: LookupFields,
  rule: DealRule,
): Promise<CrmLookup> {
  const email = participant.email.trim().toLowerCase();
  const companyProps = union(COMPANY_PROPS, fields.company);
  let matchedBy: MatchedBy = 'none';
  let contact: CrmRecord | null = null;
  let company: CrmRecord | null = null;
  let dealIds: string[] = [];

  if (emailDomain(email)) {
    // Search EQ on a string ignores case; the value is lower-cased anyway, as HubSpot stores it.
    const found = await searchOne(run, 'contacts', 'email', email, union(CONTACT_PROPS, fields.contact));
    if (found) {
      contact = record('contact', found);
      matchedBy = 'email';
      const [companies, deals] = await Promise.all([
        associated(run, 'contacts', found.id, 'companies'),
        associated(run, 'contacts', found.id, 'deals'),
      ]);
      dealIds = deals.map((d) => d.toId);
      const primary =
        companies.find((c) => c.typeIds.some((t) => PRIMARY_COMPANY_TYPES.has(t))) ?? companies[0];
      if (primary) {
        company = record(
          'company',
          await run('read company', (api) => api.getById('companies', primary.toId, companyProps)),
        );
      }
    }
  }
  // No contact, or a contact without a company: try the email domain, then the company name.
  if (!company) {
    const domain = emailDomain(email);
    if (domain && !isFreeMailDomain(domain)) {
      const found = await searchOne(run, 'companies', 'domain', domain, companyProps, `www.${domain}`);
      if (found) company = record('company', found);
      if (found && !contact) matchedBy = 'domain';
    }
    const name = participant.company?.trim();
    if (!company && name) {
      const found = await searchOne(run, 'companies', 'name', name, companyProps);
      if (found) company = record('company', found);
      if (found && !contact) matchedBy = 'company_name';
    }
  }
  if (dealIds.length === 0 && company) {
    dealIds = (await associated(run, 'companies', company.id, 'deals')).map((d) => d.toId);
  }
  const [deals, owner] = await Promise.all([
    readDeals(run, dealIds, union(DEAL_PROPS, fields.deal)),
    readOwner(run, ownerIdOf(contact) ?? ownerIdOf(company), fields.owner),
  ]);
  return { contact, company, deals: chooseDeals(deals, rule), owner, matchedBy };
}

async function searchOne(
  run: Runner,
  type: string,
  property: string,
  value: string,
  properties: string[],
  alternative?: string,
): Promise<SdkObject | undefined> {
  const groups = [value, ...(alternative ? [alternative] : [])].map((v) => ({
    filters: [{ propertyName: property, operator: 'EQ', value: v }],
  }));
  const r = await run(`search ${type}`, (api) =>
    api.search(type, { filterGroups: groups, properties, limit: 1 }),
  );
  return r.results[0];
}

async function associated(run: Runner, from: string, id: string, to: string) {
  const out: { toId: string; typeIds: number[] }[] = [];
  let after: string | undefined;
  do {
    const page = await run(`associations ${from}->${to}`, (api) => api.associationPage(from, id, to, after));
    out.push(...page.results);
    after = page.after;
  } while (after);
  return out;
}

async function readDeals(run: Runner, ids: string[], properties: string[]): Promise<CrmRecord[]> {
  const unique = [...new Set(ids)];
  const out: CrmRecord[] = [];
  for (let i = 0; i < unique.length; i += BATCH_READ_MAX) {
    const chunk = unique.slice(i, i + BATCH_READ_MAX);
    const r = await run('read deals', (api) => api.batchRead('deals', chunk, properties));
    out.push(...r.results.map((d) => record('deal', d)));
  }
  return out;
}

export async function readOwner(
  run: Runner,
  ownerId: string | undefined,
  fields: string[],
): Promise<CrmRecord | null> {
  if (!ownerId) return null;
  try {
    return ownerRecord(await run('read owner', (api) => api.owner(ownerId)), fields);
  } catch (e) {
    if (e instanceof CrmNotFoundError) return null; // owner deactivated or removed
    throw e;
  }
}

/** An owner as a record, with the asked-for fields (all of them when none are named). */
export function ownerRecord(o: OwnerInfo, fields: string[]): CrmRecord {
  const all: Record<string, unknown> = {
    email: o.email,
    firstName: o.firstName,
    lastName: o.lastName,
    userId: o.userId,
  };
  const properties = fields.length === 0 ? all : Object.fromEntries(fields.map((f) => [f, all[f] ?? null]));
  return { type: 'owner', id: o.id, properties };
}

export function ownerIdOf(r: CrmRecord | null): string | undefined {
  const id = r?.properties.hubspot_owner_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

export function record(type: CrmRecord['type'], o: SdkObject): CrmRecord {
  return { type, id: o.id, properties: { ...o.properties } };
}

export function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}
