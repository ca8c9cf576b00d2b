import type { HubSpotStore } from './store.js';
import type { ObjectType } from './model.js';

/**
 * Seed records with the cases the lookup must get right:
 * - Jane and Bob both work at Acme Corp (acme.example); Bob has no deals of his own, so his
 *   lookup falls back to the company's. Acme has open deals with different close dates, a tie
 *   on close date broken by last-modified, one without a close date, a closed-won and a
 *   closed-lost deal.
 * - Initech (initech.example) and Globex (globex.example) have no contact for
 *   newperson@initech.example / lena.lead@globex.example: they resolve by domain.
 * - A company whose domain is gmail.com: a free-mail address must never match it.
 * - Hooli has no domain: found only by company name.
 * - Dana at Umbrella Inc with one open and one closed-lost deal.
 * - Walt at Wayne Enterprises: his only deal is closed-won, the company has two open ones.
 * - Rita (first name cleared to "") has no company; Rocket Labs' domain is her email's.
 * - Gilfoyle (no first name at all) works at Hooli, which has no domain.
 * Emails are stored lower-case, as HubSpot does. An unset property reads back as null, a cleared
 * one as "" (HubSpot CRM API, properties: "Properties without a value are returned as null").
 */
export const SEED_IDS = {
  owners: { olivia: '70001', mark: '70002' },
} as const;

export interface SeedRefs {
  contacts: Record<'jane' | 'bob' | 'dana' | 'walt' | 'rita' | 'gilfoyle', string>;
  companies: Record<
    'acme' | 'initech' | 'globex' | 'gmail' | 'umbrella' | 'hooli' | 'wayne' | 'rockets',
    string
  >;
  deals: Record<string, string>;
}

export function seed(store: HubSpotStore): SeedRefs {
  store.owners.set(SEED_IDS.owners.olivia, {
    id: SEED_IDS.owners.olivia,
    email: 'olivia.owner@seller.example',
    firstName: 'Olivia',
    lastName: 'Owner',
    userId: 9001,
  });
  store.owners.set(SEED_IDS.owners.mark, {
    id: SEED_IDS.owners.mark,
    email: 'mark.manager@seller.example',
    firstName: 'Mark',
    lastName: 'Manager',
    userId: 9002,
  });
  const { olivia, mark } = SEED_IDS.owners;
  const company = (name: string, domain: string | undefined, owner: string) =>
    store.create('companies', { name, ...(domain ? { domain } : {}), hubspot_owner_id: owner }).id;
  const companies = {
    acme: company('Acme Corp', 'acme.example', olivia),
    initech: company('Initech', 'initech.example', mark),
    globex: company('Globex', 'globex.example', mark),
    gmail: company('Google Mail Fan Club', 'gmail.com', mark),
    umbrella: company('Umbrella Inc', 'umbrella.example', olivia),
    hooli: company('Hooli', undefined, mark),
    wayne: company('Wayne Enterprises', 'wayne.example', olivia),
    rockets: company('Rocket Labs', 'rockets.example', mark),
  };
  const contact = (email: string, firstname: string | undefined, lastname: string, owner: string) =>
    store.create('contacts', {
      email,
      ...(firstname === undefined ? {} : { firstname }),
      lastname,
      hubspot_owner_id: owner,
    }).id;
  const contacts = {
    jane: contact('jane.doe@acme.example', 'Jane', 'Doe', olivia),
    bob: contact('bob.smith@acme.example', 'Bob', 'Smith', mark),
    dana: contact('dana@umbrella.example', 'Dana', 'Scully', olivia),
    walt: contact('walt@wayne.example', 'Walt', 'Grant', olivia),
    rita: contact('rita@rockets.example', '', 'Rocket', mark),
    gilfoyle: contact('gilfoyle@hooli.example', undefined, 'Gilfoyle', mark),
  };
  link(store, 'contacts', contacts.walt, 'companies', companies.wayne, [279, 1]);
  link(store, 'contacts', contacts.gilfoyle, 'companies', companies.hooli, [279, 1]);
  link(store, 'contacts', contacts.jane, 'companies', companies.acme, [279, 1]);
  link(store, 'contacts', contacts.bob, 'companies', companies.acme, [279, 1]);
  link(store, 'contacts', contacts.dana, 'companies', companies.umbrella, [279, 1]);

  const deals: Record<string, string> = {};
  const deal = (
    key: string,
    name: string,
    stage: string,
    close: string | null,
    modified: string,
    amount: string,
  ) => {
    const props: Record<string, string> = {
      dealname: name,
      dealstage: stage,
      pipeline: 'default',
      amount,
      hs_lastmodifieddate: modified,
      hubspot_owner_id: olivia,
    };
    if (close) props.closedate = close;
    const id = store.create('deals', props).id;
    deals[key] = id;
    return id;
  };
  const acmeDeals = [
    deal(
      'acmeExpansion',
      'Acme - Expansion',
      'contractsent',
      '2026-03-31T00:00:00.000Z',
      '2026-01-10T09:00:00.000Z',
      '50000',
    ),
    deal(
      'acmeRenewal',
      'Acme - Renewal',
      'qualifiedtobuy',
      '2026-02-15T00:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
      '20000',
    ),
    deal(
      'acmeAddon',
      'Acme - Add-on',
      'presentationscheduled',
      '2026-02-15T00:00:00.000Z',
      '2026-01-12T09:00:00.000Z',
      '8000',
    ),
    deal('acmeSomeday', 'Acme - Someday', 'appointmentscheduled', null, '2026-01-02T09:00:00.000Z', '1000'),
    deal(
      'acmePilot',
      'Acme - Pilot',
      'closedwon',
      '2026-01-20T00:00:00.000Z',
      '2026-01-21T09:00:00.000Z',
      '5000',
    ),
    deal(
      'acmeLost',
      'Acme - Lost',
      'closedlost',
      '2026-01-25T00:00:00.000Z',
      '2026-01-26T09:00:00.000Z',
      '9000',
    ),
  ];
  for (const id of acmeDeals) {
    link(store, 'deals', id, 'companies', companies.acme, [341, 5]);
    link(store, 'contacts', contacts.jane, 'deals', id, [4]);
  }
  const other = (key: string, name: string, stage: string, close: string, to: keyof typeof companies) => {
    const id = deal(key, name, stage, close, '2026-01-03T09:00:00.000Z', '12000');
    link(store, 'deals', id, 'companies', companies[to], [341, 5]);
    return id;
  };
  other('globexPlatform', 'Globex - Platform', 'qualifiedtobuy', '2026-04-30T00:00:00.000Z', 'globex');
  other('initechTrial', 'Initech - Trial', 'appointmentscheduled', '2026-03-01T00:00:00.000Z', 'initech');
  const umbrellaSuite = other(
    'umbrellaSuite',
    'Umbrella - Security Suite',
    'decisionmakerboughtin',
    '2026-05-01T00:00:00.000Z',
    'umbrella',
  );
  const umbrellaOld = other(
    'umbrellaOld',
    'Umbrella - Old',
    'closedlost',
    '2025-11-01T00:00:00.000Z',
    'umbrella',
  );
  link(store, 'contacts', contacts.dana, 'deals', umbrellaSuite, [4]);
  link(store, 'contacts', contacts.dana, 'deals', umbrellaOld, [4]);
  const batmobile = other(
    'wayneBatmobile',
    'Wayne - Batmobile',
    'closedwon',
    '2025-10-01T00:00:00.000Z',
    'wayne',
  );
  link(store, 'contacts', contacts.walt, 'deals', batmobile, [4]);
  other('wayneRenewal', 'Wayne - Renewal 2027', 'contractsent', '2026-12-01T00:00:00.000Z', 'wayne');
  other('wayneGotham', 'Wayne - Gotham Expansion', 'qualifiedtobuy', '2027-03-01T00:00:00.000Z', 'wayne');
  other(
    'rocketsLaunch',
    'Rocket Labs - Launch',
    'presentationscheduled',
    '2026-09-01T00:00:00.000Z',
    'rockets',
  );
  return { contacts, companies, deals };
}

const INVERSE: Record<number, number> = { 279: 280, 1: 2, 4: 3, 341: 342, 5: 6 };

function link(
  store: HubSpotStore,
  from: ObjectType,
  fromId: string,
  to: ObjectType,
  toId: string,
  types: number[],
) {
  for (const t of types) store.associate(from, fromId, to, toId, t, INVERSE[t] ?? t);
}
