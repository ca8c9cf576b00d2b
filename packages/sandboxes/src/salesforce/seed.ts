import type { OrgStore } from './store.js';

/** The API user the sandbox's tokens belong to (also the JWT `sub`). */
export const INTEGRATION_USERNAME = 'integration@crm-sync.sandbox';

export interface SeedIds {
  integrationUserId: string;
}

const at = (iso: string): string => `${iso}T09:00:00.000+0000`;

/**
 * Records covering the lookup's tricky cases:
 * - two contacts at one account (Acme), one mixed-case email on the wire, one with a quote;
 * - several open opportunities with a close-date tie broken by LastModifiedDate, plus closed ones;
 * - a lead without a contact (Globex); an account by domain without a contact (Initech);
 * - an account whose Website is a free-mail domain (gmail.com) that must never match;
 * - an account found only by name (Hooli), and a contact at Umbrella with opportunities;
 * - Walt at Wayne Enterprises (a closed-won and two open opportunities on the account);
 * - Rita, a contact without a first name or an account, whose email domain is Rocket Labs' Website;
 * - Gilfoyle, without a first name, at Hooli, an account without a Website.
 * Empty fields are null, as Salesforce returns them (REST API Developer Guide, "Working with
 * Records": fields with no value are returned as null).
 */
export function seedOrg(store: OrgStore): SeedIds {
  const user = (first: string, last: string, username: string) =>
    store.insertRaw('User', {
      FirstName: first,
      LastName: last,
      Name: `${first} ${last}`,
      Username: username,
      Email: username,
      IsActive: true,
      Title: 'Account Executive',
    }).Id;
  const integration = user('Integration', 'User', INTEGRATION_USERNAME);
  const olivia = user('Olivia', 'Owner', 'olivia.owner@crm-sync.sandbox');
  const max = user('Max', 'Seller', 'max.seller@crm-sync.sandbox');

  const account = (Name: string, Website: string | null, OwnerId: string) =>
    store.insertRaw('Account', {
      Name,
      Website,
      OwnerId,
      Industry: 'Technology',
      LastModifiedDate: at('2025-12-01'),
    }).Id;
  const acme = account('Acme Corp', 'acme.example', olivia);
  const initech = account('Initech', 'www.initech.example', max);
  const gmailFans = account('Gmail Fans Ltd', 'gmail.com', max);
  const umbrella = account('Umbrella Inc', 'https://umbrella.example/', max);
  const hooli = account('Hooli', null, olivia);
  const wayne = account('Wayne Enterprises', 'https://www.wayne.example', olivia);
  const rockets = account('Rocket Labs', 'rockets.example', max);

  const contact = (
    FirstName: string | null,
    LastName: string,
    Email: string,
    AccountId: string | null,
    OwnerId: string,
  ) => store.insertRaw('Contact', { FirstName, LastName, Email, AccountId, OwnerId, Title: 'Buyer' });
  contact('Jane', 'Doe', 'jane.doe@acme.example', acme, olivia);
  contact('Bob', 'Smith', 'bob.smith@acme.example', acme, max);
  contact('Pat', "O'Neil", "pat.o'neil@acme.example", acme, olivia);
  contact('Dana', 'Scully', 'dana@umbrella.example', umbrella, max);
  contact('Walt', 'Grant', 'walt@wayne.example', wayne, olivia);
  contact(null, 'Rocket', 'rita@rockets.example', null, max);
  contact(null, 'Gilfoyle', 'gilfoyle@hooli.example', hooli, max);

  store.insertRaw('Lead', {
    FirstName: 'Lena',
    LastName: 'Lead',
    Email: 'lena.lead@globex.example',
    Company: 'Globex',
    Status: 'Working - Contacted',
    IsConverted: false,
    OwnerId: max,
  });

  const opp = (
    Name: string,
    AccountId: string,
    StageName: string,
    CloseDate: string,
    Amount: number,
    modified: string,
    OwnerId = olivia,
  ) =>
    store.insertRaw('Opportunity', {
      Name,
      AccountId,
      StageName,
      CloseDate,
      Amount,
      OwnerId,
      LastModifiedDate: at(modified),
    });
  opp('Acme - Renewal', acme, 'Negotiation/Review', '2026-03-31', 50_000, '2026-01-10');
  opp('Acme - Expansion', acme, 'Proposal/Price Quote', '2026-02-15', 120_000, '2026-01-05');
  opp('Acme - Pilot', acme, 'Qualification', '2026-02-15', 15_000, '2026-01-12');
  opp('Acme - Platform', acme, 'Closed Won', '2026-01-20', 200_000, '2026-01-20');
  opp('Acme - Legacy', acme, 'Closed Lost', '2026-01-25', 30_000, '2026-01-25');
  opp('Initech - TPS Reports', initech, 'Prospecting', '2026-05-01', 8_000, '2025-12-20', max);
  opp('Gmail Fans - Never', gmailFans, 'Prospecting', '2026-02-01', 1_000, '2025-12-20', max);
  opp('Umbrella - Lab Supplies', umbrella, 'Needs Analysis', '2026-02-28', 40_000, '2026-01-02', max);
  opp('Umbrella - Outbreak Response', umbrella, 'Prospecting', '2026-04-30', 90_000, '2026-01-08', max);
  opp('Wayne - Batmobile', wayne, 'Closed Won', '2025-10-01', 250_000, '2025-10-02');
  opp('Wayne - Renewal 2027', wayne, 'Negotiation/Review', '2026-12-01', 80_000, '2026-01-03');
  opp('Wayne - Gotham Expansion', wayne, 'Qualification', '2027-03-01', 300_000, '2026-01-04');
  // Owned by someone other than Rita's owner (as in the HubSpot seed): a deal's owner is its own.
  opp('Rocket Labs - Launch', rockets, 'Needs Analysis', '2026-09-01', 25_000, '2026-01-06');

  return { integrationUserId: integration };
}
