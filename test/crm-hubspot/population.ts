import type { Participant } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';

/** The seeded participants whose lookups take each rule's branch (see packages/sandboxes/src/hubspot/seed.ts). */
export const TRICKY: Participant[] = [
  { email: 'jane.doe@acme.example' },
  { email: '  Bob.Smith@ACME.example ' },
  { email: 'dana@umbrella.example' },
  { email: 'newperson@initech.example' },
  { email: 'lena.lead@globex.example', name: 'Lena Lead' },
  { email: 'sam@gmail.com' },
  { email: 'gavin@yahoo.com', company: 'hooli' },
  { email: 'pat@nowhere.example', company: 'HOOLI' },
  { email: 'nobody@nowhere.example' },
  { email: 'not-an-address', company: 'Acme Corp' },
];

const INVERSE: Record<number, number> = { 279: 280, 1: 2, 4: 3, 341: 342, 5: 6 };

/**
 * Adds a backfill-sized population to the sandbox's portal and returns its participants (about
 * 280, plus TRICKY ≈ 290 distinct): contacts with and without companies and deals of their own,
 * people known only by their company's domain (one company stored as `www.`), free-mail people
 * known by company name, strangers, and eight owners.
 */
export function populate(sb: HubSpotSandbox): Participant[] {
  const { store } = sb.state;
  const link = (
    from: 'contacts' | 'deals',
    fromId: string,
    to: 'companies' | 'deals',
    toId: string,
    types: number[],
  ) => {
    for (const t of types) store.associate(from, fromId, to, toId, t, INVERSE[t] ?? t);
  };
  const owners = ['70001', '70002'];
  for (let i = 0; i < 6; i++) {
    const id = String(70010 + i);
    owners.push(id);
    store.owners.set(id, {
      id,
      email: `rep${i}@seller.example`,
      firstName: 'Rep',
      lastName: `No${i}`,
      userId: 9100 + i,
    });
  }
  const ownerOf = (i: number) => owners[i % owners.length]!;

  const companies: string[] = [];
  const openDeals: string[] = [];
  for (let i = 0; i < 60; i++) {
    const domain = i === 7 ? 'www.gen7.example' : `gen${i}.example`;
    const company = store.create('companies', {
      name: `Gen Co ${i}`,
      domain,
      hubspot_owner_id: ownerOf(i + 3),
    }).id;
    companies.push(company);
    const deal = (name: string, stage: string, close: string, modified: string) => {
      const id = store.create('deals', {
        dealname: name,
        dealstage: stage,
        pipeline: 'default',
        amount: String(1000 * (i + 1)),
        closedate: close,
        hs_lastmodifieddate: modified,
        hubspot_owner_id: ownerOf(i),
      }).id;
      link('deals', id, 'companies', company, [341, 5]);
      return id;
    };
    const day = String((i % 27) + 1).padStart(2, '0');
    openDeals.push(
      deal(`Gen ${i} - New`, 'qualifiedtobuy', `2026-04-${day}T00:00:00.000Z`, '2026-01-10T09:00:00.000Z'),
    );
    deal(`Gen ${i} - Won`, 'closedwon', '2026-01-15T00:00:00.000Z', '2026-01-16T09:00:00.000Z');
    if (i % 3 === 0)
      deal(`Gen ${i} - Upsell`, 'contractsent', `2026-04-${day}T00:00:00.000Z`, '2026-01-11T09:00:00.000Z');
  }
  for (let m = 0; m < 10; m++)
    store.create('companies', { name: `Named Co ${m}`, hubspot_owner_id: ownerOf(m) });

  const people: Participant[] = [];
  for (let j = 0; j < 170; j++) {
    const c = j % 60;
    const email = `person${j}@gen${c}.example`;
    const props: Record<string, string> = { email, firstname: `Person${j}`, lastname: 'Gen' };
    if (j % 10 !== 0) props.hubspot_owner_id = ownerOf(j);
    const contact = store.create('contacts', props).id;
    if (j % 15 !== 0) link('contacts', contact, 'companies', companies[c]!, [279, 1]);
    if (j % 4 === 0) link('contacts', contact, 'deals', openDeals[c]!, [4]);
    people.push({ email: j % 9 === 0 ? email.toUpperCase() : email, name: `Person${j} Gen` });
  }
  for (let k = 0; k < 60; k++) people.push({ email: `visitor${k}@gen${k}.example` });
  for (let m = 0; m < 30; m++) {
    people.push({
      email: `buyer${m}@gmail.com`,
      company: m % 3 === 2 ? `Unknown ${m}` : `named co ${m % 10}`,
    });
  }
  for (let u = 0; u < 20; u++)
    people.push({ email: `who${u}@nowhere${u}.example`, company: u % 2 ? 'Nobody Inc' : undefined });
  return [...TRICKY, ...people];
}
