/**
 * Runs the match rules (decide.ts) for many participants against one CRM, fetching candidates
 * step by step, each step one batched fetch for everyone who still needs it. `lookup` is this with
 * a single participant, so single and batch lookups give the same answer by construction.
 */
import { emailDomain } from '../freemail.js';
import { lookupKey, type CrmLookup, type DealRule, type Participant } from '../types.js';
import type { CandidateSource, CompanyCandidate, DealCandidate } from './candidates.js';
import {
  assemble,
  chooseCompanyByDomain,
  chooseCompanyByName,
  chooseDeals,
  chooseLinkedCompany,
  choosePerson,
  domainSearchable,
  noCompany,
  ownerIdFor,
  type CompanyPick,
  type PersonPick,
} from './decide.js';
import type { MatchLoser } from '../types.js';

interface Pending {
  participant: Participant;
  key: string;
  domain: string | undefined;
  person: PersonPick;
  company: CompanyPick | null;
  rejectedCompanies: MatchLoser[];
  contactDeals: DealCandidate[] | null;
}

export async function matchParticipants(
  source: CandidateSource,
  participants: Participant[],
  rule: DealRule,
): Promise<Map<string, CrmLookup>> {
  const pending = new Map<string, Pending>();
  for (const participant of participants) {
    const key = lookupKey(participant.email);
    if (pending.has(key)) continue; // the first participant with an address wins
    pending.set(key, {
      participant,
      key,
      domain: emailDomain(key),
      person: choosePerson(false, [], []),
      company: null,
      rejectedCompanies: [],
      contactDeals: null,
    });
  }
  const all = [...pending.values()];
  const addressed = all.filter((p) => p.domain !== undefined);

  // 1. The person: contacts by address, then leads for those without one.
  const contacts = await source.contactsByEmail(addressed.map((p) => p.key));
  const noContact = addressed.filter((p) => (contacts.get(p.key) ?? []).length === 0);
  const leads = noContact.length > 0 ? await source.leadsByEmail(noContact.map((p) => p.key)) : new Map();
  for (const p of addressed) {
    p.person = choosePerson(true, contacts.get(p.key) ?? [], leads.get(p.key) ?? []);
  }

  // 2. The contacts' own companies and deals.
  const withContact = all.filter((p) => p.person.person?.record.type === 'contact');
  const people = withContact.map((p) => p.person.person!);
  const [links, contactDeals] = await both(
    source.companiesOfContacts(people),
    source.dealsOfContacts(people.map((c) => c.record.id)),
  );
  for (const p of withContact) {
    const id = p.person.person!.record.id;
    p.company = chooseLinkedCompany(links.get(id) ?? []);
    p.contactDeals = contactDeals.get(id) ?? [];
  }

  // 3. No company yet: by the email's domain, then by name.
  const byDomain = all.filter((p) => !p.company && domainSearchable(p.domain));
  const domainHits = await fetchIfAny(
    byDomain.map((p) => p.domain!),
    (d) => source.companiesByDomain(d),
  );
  for (const p of byDomain) {
    const candidates = domainHits.get(p.domain!) ?? [];
    p.company = chooseCompanyByDomain(p.domain!, candidates);
    if (!p.company) p.rejectedCompanies.push(...rejectAll(candidates, `website is not ${p.domain}`));
  }
  const nameOf = (p: Pending) => (p.person.person?.companyName ?? p.participant.company)?.trim() || undefined;
  const byName = all.filter((p) => !p.company && nameOf(p));
  const nameHits = await fetchIfAny(
    byName.map((p) => nameOf(p)!.toLowerCase()),
    (n) => source.companiesByName(n),
  );
  for (const p of byName) {
    p.company = chooseCompanyByName(nameOf(p)!, nameHits.get(nameOf(p)!.toLowerCase()) ?? []);
  }

  // 4. Company deals for those without an open deal of their own.
  const needCompanyDeals = all.filter((p) => p.company && !(p.contactDeals ?? []).some((d) => d.open));
  const companyDeals = await fetchIfAny(
    needCompanyDeals.map((p) => p.company!.company.record.id),
    (ids) => source.dealsOfCompanies(ids, rule),
  );

  // 5. Deals, then the owners of contacts (or companies) and deals in one read, then each decision.
  const chosen = new Map(
    all.map((p) => [
      p,
      chooseDeals(
        p.contactDeals,
        p.company ? (companyDeals.get(p.company.company.record.id) ?? []) : null,
        rule,
      ),
    ]),
  );
  const ownerIds = all.flatMap((p) =>
    [
      ownerIdFor(p.person.person, p.company?.company ?? null),
      ...chosen.get(p)!.deals.map((d) => d.ownerId),
    ].filter((id): id is string => id !== null),
  );
  const owners = await fetchIfAny(ownerIds, (ids) => source.owners(ids));
  const out = new Map<string, CrmLookup>();
  for (const p of all) {
    const company = p.company;
    const picked = chosen.get(p)!;
    const deals = {
      ...picked,
      deals: picked.deals.map((d) => ({
        ...d,
        record: { ...d.record, owner: d.ownerId ? (owners.get(d.ownerId) ?? null) : null },
      })),
    };
    const ownerId = ownerIdFor(p.person.person, company?.company ?? null);
    out.set(
      p.key,
      assemble(
        source.crm,
        p.person,
        company,
        company?.choice ?? noCompany(p.domain, nameOf(p), p.rejectedCompanies),
        deals,
        ownerId ? (owners.get(ownerId) ?? null) : null,
      ),
    );
  }
  return out;
}

/** Both results; on a failure, the first error once both have settled (no request left running). */
async function both<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/** Calls `fetch` with the distinct keys, or answers an empty map without a request when there are none. */
async function fetchIfAny<T>(keys: string[], fetch: (keys: string[]) => Promise<Map<string, T>>) {
  const unique = [...new Set(keys)];
  return unique.length > 0 ? await fetch(unique) : new Map<string, T>();
}

function rejectAll(candidates: CompanyCandidate[], reason: string): MatchLoser[] {
  return candidates.map((c) => ({ id: c.record.id, label: c.name ?? c.record.id, reason }));
}
