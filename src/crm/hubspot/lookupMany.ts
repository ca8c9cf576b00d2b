import {
  lookupKey,
  type CrmLookup,
  type CrmRecord,
  type DealRule,
  type LookupFields,
  type MatchedBy,
  type Participant,
} from '../types.js';
import { associationsOf, readObjects, readOwners, searchGroups, type SearchGroup } from './batchReads.js';
import { chooseDeals } from './dealRule.js';
import { emailDomain, isFreeMailDomain } from './freemail.js';
import {
  COMPANY_PROPS,
  CONTACT_PROPS,
  DEAL_PROPS,
  ownerIdOf,
  PRIMARY_COMPANY_TYPES,
  record,
  union,
} from './lookup.js';
import type { Runner } from './runner.js';

/**
 * `lookupParticipant` for many participants at once, step by step in the same order of rules,
 * each step one batched request (or a few) for everyone still needing it:
 *   contacts by `email IN`, their companies and deals by v4 batch reads, the primary companies by
 *   batch read; companies by `domain IN` (never a free-mail domain), then by `name IN`; the
 *   companies' deals for those without deals of their own; all deals by batch read; the owners.
 * About ten requests for a hundred participants where single lookups take about six each.
 */
interface Pending {
  participant: Participant;
  /** Trimmed and lower-cased, as `lookupParticipant` searches it. */
  email: string;
  contact: CrmRecord | null;
  company: CrmRecord | null;
  matchedBy: MatchedBy;
  dealIds: string[];
}

export async function lookupParticipants(
  run: Runner,
  participants: Participant[],
  fields: LookupFields,
  rule: DealRule,
): Promise<Map<string, CrmLookup>> {
  const pending = new Map<string, Pending>();
  for (const participant of participants) {
    const email = lookupKey(participant.email);
    if (pending.has(email)) continue; // the first participant with an address wins
    pending.set(email, { participant, email, contact: null, company: null, matchedBy: 'none', dealIds: [] });
  }
  const all = [...pending.values()];
  const companyProps = union(COMPANY_PROPS, fields.company);

  await findContacts(run, all, union(CONTACT_PROPS, fields.contact), companyProps);
  await findCompanies(run, all, companyProps);
  const needCompanyDeals = all.filter((p) => p.dealIds.length === 0 && p.company);
  const companyDeals = await associationsOf(
    run,
    'companies',
    'deals',
    needCompanyDeals.map((p) => p.company!.id),
  );
  for (const p of needCompanyDeals) p.dealIds = (companyDeals.get(p.company!.id) ?? []).map((l) => l.toId);

  const [deals, owners] = await Promise.all([
    readObjects(
      run,
      'deals',
      all.flatMap((p) => p.dealIds),
      union(DEAL_PROPS, fields.deal),
    ),
    readOwners(
      run,
      all.flatMap((p) => ownerIdOf(p.contact) ?? ownerIdOf(p.company) ?? []),
      fields.owner,
    ),
  ]);

  const out = new Map<string, CrmLookup>();
  for (const p of all) {
    const own = [...new Set(p.dealIds)].flatMap((id) => {
      const d = deals.get(id);
      return d ? [record('deal', d)] : [];
    });
    const ownerId = ownerIdOf(p.contact) ?? ownerIdOf(p.company);
    out.set(p.email, {
      contact: p.contact,
      company: p.company,
      deals: chooseDeals(own, rule),
      owner: ownerId ? (owners.get(ownerId) ?? null) : null,
      matchedBy: p.matchedBy,
    });
  }
  return out;
}

/** Contacts by email, with their deal ids and primary (else first) company. */
async function findContacts(
  run: Runner,
  all: Pending[],
  contactProps: string[],
  companyProps: string[],
): Promise<void> {
  const withAddress = all.filter((p) => emailDomain(p.email));
  const found = await searchGroups(
    run,
    'contacts',
    'email',
    withAddress.map((p) => ({ key: p.email, values: [p.email] })),
    contactProps,
  );
  for (const p of withAddress) {
    const hit = found.get(p.email)?.[0];
    if (hit) {
      p.contact = record('contact', hit);
      p.matchedBy = 'email';
    }
  }
  const withContact = all.filter((p) => p.contact);
  const ids = withContact.map((p) => p.contact!.id);
  const [companyLinks, dealLinks] = await Promise.all([
    associationsOf(run, 'contacts', 'companies', ids),
    associationsOf(run, 'contacts', 'deals', ids),
  ]);
  const primaryOf = new Map<Pending, string>();
  for (const p of withContact) {
    const id = p.contact!.id;
    p.dealIds = (dealLinks.get(id) ?? []).map((l) => l.toId);
    const links = companyLinks.get(id) ?? [];
    const primary = links.find((l) => l.typeIds.some((t) => PRIMARY_COMPANY_TYPES.has(t))) ?? links[0];
    if (primary) primaryOf.set(p, primary.toId);
  }
  const companies = await readObjects(run, 'companies', [...primaryOf.values()], companyProps);
  for (const [p, companyId] of primaryOf) {
    const c = companies.get(companyId);
    if (c) p.company = record('company', c);
  }
}

/** Companies for those still without one: by email domain (never free-mail), then by name. */
async function findCompanies(run: Runner, all: Pending[], companyProps: string[]): Promise<void> {
  const byDomain = all.flatMap((p) => {
    const domain = p.company ? undefined : emailDomain(p.email);
    return domain && !isFreeMailDomain(domain) ? [{ p, domain }] : [];
  });
  const domainGroups: SearchGroup[] = byDomain.map(({ domain }) => ({
    key: domain,
    values: [domain, `www.${domain}`],
  }));
  const byDomainFound = await searchGroups(run, 'companies', 'domain', domainGroups, companyProps);
  for (const { p, domain } of byDomain) {
    const hit = byDomainFound.get(domain)?.[0];
    if (!hit) continue;
    p.company = record('company', hit);
    if (!p.contact) p.matchedBy = 'domain';
  }

  const byName = all.flatMap((p) => {
    const name = p.company ? undefined : p.participant.company?.trim();
    return name ? [{ p, key: name.toLowerCase() }] : [];
  });
  const byNameFound = await searchGroups(
    run,
    'companies',
    'name',
    byName.map(({ key }) => ({ key, values: [key] })),
    companyProps,
  );
  for (const { p, key } of byName) {
    const hit = byNameFound.get(key)?.[0];
    if (!hit) continue;
    p.company = record('company', hit);
    if (!p.contact) p.matchedBy = 'company_name';
  }
}
