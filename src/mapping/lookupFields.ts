import type { CrmName, DealRule, LookupFields } from '../crm/types.js';
import type { Mapping } from './types.js';

/**
 * Properties each adapter reads whatever the mapping says: to match the participant (email),
 * find the company (domain/name, account id), order and filter deals (deal rule, closed flag)
 * and find the owner.
 */
export const ALWAYS_READ: Record<CrmName, LookupFields> = {
  hubspot: {
    contact: ['email', 'firstname', 'lastname', 'hubspot_owner_id'],
    lead: [],
    company: ['name', 'domain', 'hubspot_owner_id'],
    deal: [
      'dealname',
      'dealstage',
      'amount',
      'closedate',
      'hs_is_closed',
      'hs_lastmodifieddate',
      'hubspot_owner_id',
    ],
    owner: [],
  },
  salesforce: {
    contact: ['FirstName', 'LastName', 'Email', 'AccountId', 'OwnerId'],
    lead: ['FirstName', 'LastName', 'Email', 'Company', 'Status'],
    company: ['Name', 'Website', 'OwnerId'],
    // CurrencyIsoCode is left out: it exists only in multi-currency orgs.
    deal: ['Name', 'StageName', 'Amount', 'CloseDate', 'IsClosed', 'LastModifiedDate', 'OwnerId'],
    owner: ['Name', 'Email'],
  },
};

const RECORD_TYPES = ['contact', 'lead', 'company', 'deal', 'owner'] as const;

/**
 * Which CRM properties the lookup must read: those the adapter always needs, then those the
 * expressions name (`contact.jobtitle`, `lookup.deals.amount`), then `lookup_fields` extras.
 * `id` is never asked for: it is the record id, always read (SOQL refuses a duplicate Id).
 */
export function lookupFieldsFor(mapping: Mapping): LookupFields {
  const sets: Record<keyof LookupFields, Set<string>> = {
    contact: new Set(ALWAYS_READ[mapping.crm].contact),
    lead: new Set(ALWAYS_READ[mapping.crm].lead),
    company: new Set(ALWAYS_READ[mapping.crm].company),
    deal: new Set(ALWAYS_READ[mapping.crm].deal),
    owner: new Set(ALWAYS_READ[mapping.crm].owner),
  };
  const fields = [
    ...mapping.context.contact,
    ...mapping.context.company,
    ...mapping.context.deals,
    ...mapping.context.custom,
    ...mapping.writeback.activity.fields,
    ...(mapping.writeback.followups?.fields ?? []),
  ];
  for (const field of fields) {
    for (const ref of field.properties) sets[ref.record].add(ref.property);
  }
  for (const type of RECORD_TYPES) {
    for (const property of mapping.extraLookupFields[type] ?? []) sets[type].add(property);
  }
  const list = (type: keyof LookupFields) => [...sets[type]].filter((p) => p.toLowerCase() !== 'id');
  return {
    contact: list('contact'),
    lead: list('lead'),
    company: list('company'),
    deal: list('deal'),
    owner: list('owner'),
  };
}

export function dealRuleFor(mapping: Mapping): DealRule {
  return { ...mapping.dealRule };
}
