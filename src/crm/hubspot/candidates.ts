/**
 * The HubSpot side of the match rules (src/crm/match/): fetches candidates in batches, each step
 * one request (or a few) for many participants: contacts by `email IN`, their companies and deals
 * through v4 association batch reads and object batch reads, companies by `domain IN` and
 * `name IN`, the companies' deals, the owners. HubSpot has no leads here.
 */
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
import type { CrmRecord, LookupFields } from '../types.js';
import { associationsOf, readObjects, readOwners, searchGroups, type SearchGroup } from './batchReads.js';
import { isOpenDeal } from './dealRule.js';
import type { Runner } from './runner.js';
import type { SdkObject } from './sdk.js';

export const CONTACT_PROPS = ['email', 'firstname', 'lastname', 'hubspot_owner_id', 'lastmodifieddate'];
export const COMPANY_PROPS = ['name', 'domain', 'hubspot_owner_id', 'hs_lastmodifieddate'];
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

export function record(type: CrmRecord['type'], o: SdkObject): CrmRecord {
  return { type, id: o.id, properties: { ...o.properties } };
}

export function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}

const person = (o: SdkObject): PersonCandidate => ({
  record: record('contact', o),
  name: fullName(o.properties.firstname, o.properties.lastname),
  modifiedAt: timeOf(o.properties.lastmodifieddate),
  ownerId: textOf(o.properties.hubspot_owner_id),
});

const company = (o: SdkObject): CompanyCandidate => ({
  record: record('company', o),
  name: textOf(o.properties.name),
  website: textOf(o.properties.domain),
  modifiedAt: timeOf(o.properties.hs_lastmodifieddate),
  ownerId: textOf(o.properties.hubspot_owner_id),
});

const deal = (o: SdkObject): DealCandidate => {
  const r = record('deal', o);
  return {
    record: r,
    name: textOf(o.properties.dealname),
    open: isOpenDeal(r),
    stage: textOf(o.properties.dealstage),
    closeDate: timeOf(o.properties.closedate),
    amount: numberOf(o.properties.amount),
    modifiedAt: timeOf(o.properties.hs_lastmodifieddate),
    ownerId: textOf(o.properties.hubspot_owner_id),
  };
};

export function hubSpotCandidates(run: Runner, fields: LookupFields): CandidateSource {
  const contactProps = union(CONTACT_PROPS, fields.contact);
  const companyProps = union(COMPANY_PROPS, fields.company);
  const dealProps = union(DEAL_PROPS, fields.deal);

  /** Each id's linked records of `to`, read in batches. */
  async function linked(from: string, to: string, ids: string[], props: string[]) {
    const links = await associationsOf(run, from, to, ids);
    const objects = await readObjects(
      run,
      to,
      [...links.values()].flatMap((l) => l.map((x) => x.toId)),
      props,
    );
    return { links, objects };
  }

  async function companiesBy(property: string, groups: SearchGroup[]) {
    const found = await searchGroups(run, 'companies', property, groups, companyProps);
    return new Map([...found].map(([k, list]) => [k, list.map(company)]));
  }

  return {
    crm: 'hubspot',
    async contactsByEmail(emails) {
      // Search EQ/IN on a string ignores case; emails are lower-cased anyway, as HubSpot stores them.
      const found = await searchGroups(
        run,
        'contacts',
        'email',
        emails.map((e) => ({ key: e, values: [e] })),
        contactProps,
      );
      return new Map([...found].map(([k, list]) => [k, list.map(person)]));
    },
    leadsByEmail: async () => new Map(),
    async companiesOfContacts(contacts) {
      const { links, objects } = await linked(
        'contacts',
        'companies',
        contacts.map((c) => c.record.id),
        companyProps,
      );
      const out = new Map<string, CompanyLink[]>();
      for (const [id, list] of links) {
        out.set(
          id,
          list.flatMap((l) => {
            const o = objects.get(l.toId);
            return o
              ? [{ company: company(o), primary: l.typeIds.some((t) => PRIMARY_COMPANY_TYPES.has(t)) }]
              : [];
          }),
        );
      }
      return out;
    },
    async dealsOfContacts(ids) {
      return dealsOf(await linked('contacts', 'deals', ids, dealProps));
    },
    companiesByDomain: (domains) =>
      companiesBy(
        'domain',
        domains.map((d) => ({ key: d, values: [d, `www.${d}`] })),
      ),
    companiesByName: (names) =>
      companiesBy(
        'name',
        names.map((n) => ({ key: n, values: [n] })),
      ),
    async dealsOfCompanies(ids) {
      return dealsOf(await linked('companies', 'deals', ids, dealProps));
    },
    owners: (ids) => readOwners(run, ids, fields.owner),
  };
}

function dealsOf(r: { links: Map<string, { toId: string }[]>; objects: Map<string, SdkObject> }) {
  const out = new Map<string, DealCandidate[]>();
  for (const [id, list] of r.links) {
    out.set(
      id,
      list.flatMap((l) => {
        const o = r.objects.get(l.toId);
        return o ? [deal(o)] : [];
      }),
    );
  }
  return out;
}
