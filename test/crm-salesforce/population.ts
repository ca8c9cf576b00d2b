import type { Participant } from '../../src/crm/types.js';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';

/** The seeded participants whose lookups take each rule's branch (see packages/sandboxes/src/salesforce/seed.ts). */
export const TRICKY: Participant[] = [
  { email: 'jane.doe@acme.example' },
  { email: 'Bob.Smith@ACME.example' },
  { email: "pat.o'neil@acme.example" },
  { email: "x' OR LastName != 'y@acme.example" },
  { email: 'dana@umbrella.example' },
  { email: 'LENA.lead@globex.example' },
  { email: 'newperson@initech.example' },
  { email: 'sam@gmail.com' },
  { email: 'pat@hooli-mail.example', company: 'hooli' },
  { email: 'nobody@nowhere.example' },
  { email: 'not-an-address', company: 'Umbrella Inc' },
];

const at = (day: number) => `2026-01-${String((day % 28) + 1).padStart(2, '0')}T09:00:00.000+0000`;

/**
 * Adds a backfill-sized org to the sandbox and returns its participants (about 280, plus TRICKY
 * ≈ 290 distinct): contacts (one address twice, the newer wins; some without an account), leads
 * (one converted, one owned by a queue, one beside a contact), accounts by Website in its many
 * forms (with `www.`, a URL, a subdomain, a look-alike), 25 look-alike accounts that push the real
 * one out of a domain's 20 newest candidates, name-only accounts, accounts with more open
 * opportunities than the deal rule's limit, and strangers.
 */
export function populate(sb: SalesforceSandbox): Participant[] {
  const { store } = sb.state;
  const users = Array.from(
    { length: 6 },
    (_, i) =>
      store.insertRaw('User', {
        FirstName: 'Rep',
        LastName: `No${i}`,
        Name: `Rep No${i}`,
        Username: `rep${i}@crm-sync.sandbox`,
        Email: `rep${i}@crm-sync.sandbox`,
        IsActive: true,
      }).Id,
  );
  const owner = (i: number) => users[i % users.length]!;

  const websites = (i: number) =>
    [`gen${i}.example`, `https://www.gen${i}.example/about`, `shop.gen${i}.example`, `www.gen${i}.example`][
      i % 4
    ]!;
  const accounts: string[] = [];
  for (let i = 0; i < 60; i++) {
    const id = store.insertRaw('Account', {
      Name: `Gen Co ${i}`,
      Website: websites(i),
      OwnerId: owner(i + 1),
      Industry: 'Software',
      LastModifiedDate: at(i),
    }).Id;
    accounts.push(id);
    const opps = i % 5 === 0 ? 7 : 2;
    for (let k = 0; k < opps; k++) {
      store.insertRaw('Opportunity', {
        Name: `Gen ${i} - Deal ${k}`,
        AccountId: id,
        StageName: k === 1 ? 'Closed Won' : 'Prospecting',
        CloseDate: `2026-0${(k % 6) + 3}-${String(((i + k) % 27) + 1).padStart(2, '0')}`,
        Amount: 1000 * ((i * 7 + k * 3) % 11),
        OwnerId: owner(k),
        LastModifiedDate: at(i + k),
      });
    }
  }
  // A look-alike Website that contains gen3.example but is another company's.
  store.insertRaw('Account', {
    Name: 'Not Gen 3',
    Website: 'notgen3.example',
    OwnerId: owner(0),
    LastModifiedDate: at(27),
  });
  // The real bigco.example account is older than 25 look-alikes: no domain match, as for lookup.
  store.insertRaw('Account', {
    Name: 'BigCo',
    Website: 'bigco.example',
    OwnerId: owner(1),
    LastModifiedDate: at(0),
  });
  for (let n = 0; n < 25; n++) {
    store.insertRaw('Account', {
      Name: `Fan ${n}`,
      Website: `fan${n}-of-bigco.example`,
      OwnerId: owner(2),
      LastModifiedDate: at(5 + n),
    });
  }
  for (let m = 0; m < 10; m++) {
    store.insertRaw('Account', {
      Name: `Named Co ${m}`,
      Website: null,
      OwnerId: owner(m),
      LastModifiedDate: at(m),
    });
  }

  const people: Participant[] = [];
  for (let j = 0; j < 160; j++) {
    const email = `person${j}@gen${j % 60}.example`;
    store.insertRaw('Contact', {
      FirstName: `Person${j}`,
      LastName: 'Gen',
      Email: email,
      Title: 'Buyer',
      AccountId: j % 13 === 0 ? null : accounts[j % 60],
      OwnerId: owner(j),
      LastModifiedDate: at(j),
    });
    people.push({ email: j % 9 === 0 ? email.toUpperCase() : email });
  }
  // The same address twice: the more recently modified contact is the one.
  store.insertRaw('Contact', {
    FirstName: 'Older',
    LastName: 'Twin',
    Email: 'twin@gen1.example',
    AccountId: accounts[1],
    OwnerId: owner(0),
    LastModifiedDate: at(1),
  });
  store.insertRaw('Contact', {
    FirstName: 'Newer',
    LastName: 'Twin',
    Email: 'TWIN@gen1.example',
    AccountId: accounts[2],
    OwnerId: owner(1),
    LastModifiedDate: at(9),
  });
  people.push({ email: 'twin@gen1.example' });

  const lead = (email: string, company: string | null, extra: Record<string, unknown> = {}) => {
    store.insertRaw('Lead', {
      FirstName: 'Lee',
      LastName: 'Gen',
      Email: email,
      Company: company,
      Status: 'Open',
      IsConverted: false,
      OwnerId: owner(3),
      ...extra,
    });
    people.push({ email, company: 'Participant Co' });
  };
  for (let l = 0; l < 30; l++)
    lead(`lead${l}@gen${(l * 7) % 60}.example`, l % 3 === 0 ? `Named Co ${l % 10}` : `Lead Co ${l}`);
  lead('queued@leads.example', 'Named Co 4', { OwnerId: '00G5g0000000001AAA' });
  lead('converted@gen8.example', 'Gen Co 8', { IsConverted: true });
  lead('person5@gen5.example', 'Lead beside a contact');
  lead('nocompany@leads.example', null);

  for (let k = 0; k < 45; k++) people.push({ email: `visitor${k}@gen${k}.example` });
  people.push({ email: 'someone@bigco.example' }, { email: 'x@gen3.example' });
  for (let m = 0; m < 25; m++)
    people.push({
      email: `buyer${m}@gmail.com`,
      company: m % 4 === 3 ? `Unknown ${m}` : `named co ${m % 10}`,
    });
  for (let u = 0; u < 15; u++)
    people.push({ email: `who${u}@nowhere${u}.example`, company: u % 2 ? 'Nobody Inc' : undefined });
  return [...TRICKY, ...people];
}
