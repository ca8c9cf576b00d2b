/**
 * The match rules, once for every CRM (pure). Given the candidates an adapter fetched, they choose
 * the participant's contact (or lead), company, deals and owner, and say why, naming the candidates
 * that lost. The order of the rules: README, "How a call finds its CRM records".
 */
import { isFreeMailDomain } from '../freemail.js';
import type { CrmLookup, CrmRecord, CrmName, DealRule, MatchedBy } from '../types.js';
import type { CompanyCandidate, CompanyLink, DealCandidate, PersonCandidate } from './candidates.js';
import { describeKey, rankDeals, type RankedDeals } from './deals.js';
import type { MatchChoice, MatchDecision, MatchLoser, MatchRule } from '../types.js';

const day = (t: number | null) => (t === null ? 'unknown' : new Date(t).toISOString().slice(0, 10));

/** Newest first (modified), then by id, so the same candidates always give the same answer. */
function newestFirst<T extends { record: CrmRecord; modifiedAt: number | null }>(items: T[]): T[] {
  return [...items].sort(
    (a, b) =>
      (b.modifiedAt ?? 0) - (a.modifiedAt ?? 0) ||
      a.record.id.localeCompare(b.record.id, 'en', { numeric: true }),
  );
}

const none = (type: MatchChoice['type'], reason: string, rejected: MatchLoser[] = []): MatchChoice => ({
  type,
  id: null,
  label: null,
  rule: 'none',
  reason,
  rejected,
});

/** Candidates that share a key (an address, a domain, a name): the newest wins, the rest are named. */
function newestOf<T extends { record: CrmRecord; modifiedAt: number | null; name: string | null }>(
  matching: T[],
  rule: MatchRule,
  reason: string,
  same: string,
): { chosen: T; choice: MatchChoice } {
  const [first, ...rest] = newestFirst(matching);
  return {
    chosen: first!,
    choice: {
      type: first!.record.type,
      id: first!.record.id,
      label: first!.name,
      rule,
      reason: rest.length > 0 ? `${reason}; the most recently modified of ${matching.length}` : reason,
      rejected: rest.map((r) => ({
        id: r.record.id,
        label: r.name ?? r.record.id,
        reason: `same ${same}, modified less recently (${day(r.modifiedAt)})`,
      })),
    },
  };
}

export interface PersonPick {
  person: PersonCandidate | null;
  choice: MatchChoice;
}

/** Rule 1: a contact by address, else a lead. */
export function choosePerson(
  validAddress: boolean,
  contacts: PersonCandidate[],
  leads: PersonCandidate[],
): PersonPick {
  if (!validAddress)
    return { person: null, choice: none('contact', 'the participant has no valid email address') };
  const pick = (list: PersonCandidate[], rule: MatchRule, reason: string): PersonPick => {
    const { chosen, choice } = newestOf(list, rule, reason, 'address');
    return { person: chosen, choice };
  };
  if (contacts.length > 0) return pick(contacts, 'contact_email', 'contact found by email address');
  if (leads.length > 0)
    return pick(leads, 'lead_email', 'no contact has this address; an unconverted lead has');
  return { person: null, choice: none('contact', 'no contact or lead has this email address') };
}

export interface CompanyPick {
  company: CompanyCandidate;
  choice: MatchChoice;
}

/** Rule 2, first part: the contact's own company. Null when the contact has none linked. */
export function chooseLinkedCompany(links: CompanyLink[]): CompanyPick | null {
  if (links.length === 0) return null;
  const primaries = links.filter((l) => l.primary).map((l) => l.company);
  const [first] = newestFirst(primaries.length > 0 ? primaries : links.map((l) => l.company));
  const reason =
    primaries.length > 0
      ? "the contact's primary company"
      : links.length === 1
        ? "the contact's company"
        : `the most recently modified of the contact's ${links.length} companies (none marked primary)`;
  return {
    company: first!,
    choice: {
      type: 'company',
      id: first!.record.id,
      label: first!.name,
      rule: 'contact_company',
      reason,
      rejected: links
        .filter((l) => l.company.record.id !== first!.record.id)
        .map((l) => ({
          id: l.company.record.id,
          label: l.company.name ?? l.company.record.id,
          reason: primaries.length > 0 ? 'linked, but not the primary company' : 'modified less recently',
        })),
    },
  };
}

/** The host of a domain or website as people type it: `https://www.Acme.example/x` → `www.acme.example`. */
export function hostOf(website: string): string {
  return website
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/, '')
    .replace(/\.$/, '');
}

/** Whether a website is the domain itself or one of its subdomains (`www.acme.example` for acme.example). */
export function websiteMatchesDomain(domain: string, website: string): boolean {
  const host = hostOf(website);
  return host !== '' && (host === domain || host.endsWith(`.${domain}`));
}

/** Whether the domain rule may run at all for this address's domain. */
export function domainSearchable(domain: string | undefined): domain is string {
  return domain !== undefined && !isFreeMailDomain(domain);
}

/** Rule 2, second part: by the email's domain. */
export function chooseCompanyByDomain(domain: string, candidates: CompanyCandidate[]): CompanyPick | null {
  const matching = candidates.filter((c) => c.website !== null && websiteMatchesDomain(domain, c.website));
  const others: MatchLoser[] = candidates
    .filter((c) => !matching.includes(c))
    .map((c) => ({
      id: c.record.id,
      label: c.name ?? c.record.id,
      reason: `website ${c.website ?? '(none)'} is not ${domain}`,
    }));
  if (matching.length === 0) return null;
  const newest = newestFirst(matching)[0]!;
  const { chosen, choice } = newestOf(
    matching,
    'email_domain',
    `its website ${newest.website} matches the email's domain ${domain}`,
    'domain',
  );
  return { company: chosen, choice: { ...choice, rejected: [...choice.rejected, ...others] } };
}

/** Rule 2, last part: by company name (the participant's, or the lead's own). */
export function chooseCompanyByName(name: string, candidates: CompanyCandidate[]): CompanyPick | null {
  const wanted = name.trim().toLowerCase();
  const matching = candidates.filter((c) => c.name?.toLowerCase() === wanted);
  if (matching.length === 0) return null;
  const { chosen, choice } = newestOf(
    matching,
    'company_name',
    `named "${newestFirst(matching)[0]!.name}" like the participant's company`,
    'name',
  );
  return { company: chosen, choice };
}

/** Why no company was found, naming what was tried. */
export function noCompany(
  domain: string | undefined,
  name: string | undefined,
  rejected: MatchLoser[],
): MatchChoice {
  const tried: string[] = [];
  if (domain === undefined) tried.push('no email domain');
  else if (isFreeMailDomain(domain))
    tried.push(`${domain} is a free-mail domain, so no company is matched by it`);
  else tried.push(`no company's website is ${domain}`);
  tried.push(name ? `no company is named "${name}"` : 'no company name given');
  return none('company', tried.join('; '), rejected);
}

/** Rule 3: the contact's open deals, else the company's. */
export function chooseDeals(
  contactDeals: DealCandidate[] | null,
  companyDeals: DealCandidate[] | null,
  rule: DealRule,
): { deals: DealCandidate[]; choice: MatchChoice } {
  const own = contactDeals ? rankDeals(contactDeals, rule) : null;
  if (own && own.chosen.length > 0) {
    return {
      deals: own.chosen,
      choice: dealChoice(own, own.rejected, rule, 'contact_open_deal', "the contact's"),
    };
  }
  const prefix =
    contactDeals && contactDeals.length > 0
      ? `the contact has no open deal (${contactDeals.length} closed); `
      : '';
  const theirs = companyDeals ? rankDeals(companyDeals, rule) : null;
  const closedOwn = own?.rejected ?? [];
  if (theirs && theirs.chosen.length > 0) {
    const c = dealChoice(
      theirs,
      distinct([...theirs.rejected, ...closedOwn]),
      rule,
      'company_open_deal',
      "the company's",
    );
    return { deals: theirs.chosen, choice: { ...c, reason: prefix + c.reason } };
  }
  const why = companyDeals === null ? 'no company, so no company deals' : 'the company has no open deal';
  return {
    deals: [],
    choice: none('deal', `${prefix}${why}`, distinct([...(theirs?.rejected ?? []), ...closedOwn])),
  };
}

const distinct = (losers: MatchLoser[]) => [...new Map(losers.map((l) => [l.id, l])).values()];

function dealChoice(
  ranked: RankedDeals,
  rejected: MatchLoser[],
  rule: DealRule,
  matchRule: MatchRule,
  whose: string,
): MatchChoice {
  const first = ranked.chosen[0]!;
  const count = ranked.open;
  return {
    type: 'deal',
    id: first.record.id,
    label: first.name,
    rule: matchRule,
    reason:
      count === 1
        ? `${whose} only open deal`
        : `${count} open deals of ${whose.replace(/'s$/, '')}; chose ${first.name ?? first.record.id}: ${describeKey(rule, first)}`,
    rejected,
  };
}

/**
 * Rule 4: the person's owner, else the company's. A lead still owned by a queue has no owner yet:
 * the account's owner is not the person working that lead.
 */
export function ownerIdFor(person: PersonCandidate | null, company: CompanyCandidate | null): string | null {
  if (person?.ownedByQueue) return null;
  return person?.ownerId ?? company?.ownerId ?? null;
}

/** What the rest of the worker sees of a decision. */
export function matchedByOf(person: PersonPick, company: CompanyPick | null): MatchedBy {
  if (person.choice.rule === 'contact_email') return 'email';
  if (person.choice.rule === 'lead_email') return 'lead_email';
  if (company?.choice.rule === 'email_domain') return 'domain';
  if (company?.choice.rule === 'company_name') return 'company_name';
  return 'none';
}

export function assemble(
  crm: CrmName,
  person: PersonPick,
  company: CompanyPick | null,
  companyChoice: MatchChoice,
  deals: { deals: DealCandidate[]; choice: MatchChoice },
  owner: CrmRecord | null,
): CrmLookup {
  const matchedBy = matchedByOf(person, company);
  const decision: MatchDecision = {
    crm,
    matchedBy,
    contact: person.choice,
    company: companyChoice,
    deal: deals.choice,
  };
  return {
    contact: person.person?.record ?? null,
    company: company?.company.record ?? null,
    deals: deals.deals.map((d) => d.record),
    owner,
    matchedBy,
    decision,
  };
}
