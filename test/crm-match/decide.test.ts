import { describe, expect, it } from 'vitest';
import type { CompanyCandidate, DealCandidate, PersonCandidate } from '../../src/crm/match/candidates.js';
import {
  chooseCompanyByDomain,
  chooseCompanyByName,
  chooseDeals,
  chooseLinkedCompany,
  choosePerson,
  noCompany,
  ownerIdFor,
  websiteMatchesDomain,
} from '../../src/crm/match/decide.js';
import { rankDeals } from '../../src/crm/match/deals.js';

const t = (iso: string) => Date.parse(iso);
const person = (
  id: string,
  name: string,
  modified: string,
  over: Partial<PersonCandidate> = {},
): PersonCandidate => ({
  record: { type: 'contact', id, properties: {} },
  name,
  modifiedAt: t(modified),
  ownerId: `owner-${id}`,
  ...over,
});
const company = (
  id: string,
  name: string,
  website: string | null,
  modified = '2026-01-01',
): CompanyCandidate => ({
  record: { type: 'company', id, properties: {} },
  name,
  website,
  modifiedAt: t(modified),
  ownerId: `owner-${id}`,
});
const deal = (id: string, name: string, over: Partial<DealCandidate> = {}): DealCandidate => ({
  record: { type: 'deal', id, properties: {} },
  name,
  open: true,
  stage: 'qualified',
  closeDate: null,
  amount: null,
  modifiedAt: null,
  ownerId: null,
  ...over,
});

describe('match rules (pure)', () => {
  it('takes the most recently modified contact with the address, naming the older one', () => {
    const pick = choosePerson(
      true,
      [person('1', 'Old Jane', '2025-01-01'), person('2', 'Jane', '2026-01-01')],
      [],
    );
    expect(pick.person?.record.id).toBe('2');
    expect(pick.choice).toMatchObject({ rule: 'contact_email', label: 'Jane' });
    expect(pick.choice.rejected).toEqual([
      { id: '1', label: 'Old Jane', reason: 'same address, modified less recently (2025-01-01)' },
    ]);
  });

  it('falls back to a lead only when no contact has the address', () => {
    const lead = person('00Q1', 'Lena', '2026-01-01', {
      record: { type: 'lead', id: '00Q1', properties: {} },
    });
    expect(choosePerson(true, [], [lead]).choice.rule).toBe('lead_email');
    expect(choosePerson(true, [person('1', 'Jane', '2026-01-01')], [lead]).choice.rule).toBe('contact_email');
    expect(choosePerson(false, [], []).choice).toMatchObject({ id: null, rule: 'none' });
  });

  it("prefers the contact's primary company, else its newest", () => {
    const a = company('a', 'Acme', 'acme.example', '2025-01-01');
    const b = company('b', 'Beta', 'beta.example', '2026-01-01');
    expect(
      chooseLinkedCompany([
        { company: b, primary: false },
        { company: a, primary: true },
      ])?.choice,
    ).toMatchObject({
      id: 'a',
      rule: 'contact_company',
      reason: "the contact's primary company",
      rejected: [{ id: 'b', reason: 'linked, but not the primary company' }],
    });
    expect(
      chooseLinkedCompany([
        { company: a, primary: false },
        { company: b, primary: false },
      ])?.company.record.id,
    ).toBe('b');
    expect(chooseLinkedCompany([])).toBeNull();
  });

  it('matches a company by the exact host of its website, never a look-alike', () => {
    expect(websiteMatchesDomain('initech.example', 'https://www.initech.example/about')).toBe(true);
    expect(websiteMatchesDomain('acme.example', 'shop.acme.example:8443')).toBe(true);
    expect(websiteMatchesDomain('acme.example', 'notacme.example')).toBe(false);
    expect(websiteMatchesDomain('uk.acme.example', 'acme.example')).toBe(false);
    const pick = chooseCompanyByDomain('acme.example', [
      company('x', 'Not Acme', 'notacme.example'),
      company('old', 'Acme (old)', 'acme.example', '2024-01-01'),
      company('new', 'Acme', 'https://acme.example', '2026-01-01'),
    ]);
    expect(pick?.choice).toMatchObject({ id: 'new', rule: 'email_domain' });
    expect(pick?.choice.rejected.map((r) => r.id)).toEqual(['old', 'x']);
    expect(chooseCompanyByDomain('acme.example', [company('x', 'Not Acme', 'notacme.example')])).toBeNull();
  });

  it('matches a company by name without regard to case, and explains a miss', () => {
    expect(chooseCompanyByName('hooli', [company('h', 'Hooli', null)])?.choice.rule).toBe('company_name');
    expect(noCompany('gmail.com', undefined, []).reason).toBe(
      'gmail.com is a free-mail domain, so no company is matched by it; no company name given',
    );
  });

  it("uses the company's open deals when the contact's only deal is closed", () => {
    const won = deal('w', 'Wayne - Batmobile', { open: false, stage: 'closedwon' });
    const open = deal('r', 'Wayne - Renewal', { closeDate: t('2026-12-01') });
    const r = chooseDeals([won], [open, won], { orderBy: 'close_date_asc', limit: 3 });
    expect(r.deals.map((d) => d.record.id)).toEqual(['r']);
    expect(r.choice).toMatchObject({ rule: 'company_open_deal', id: 'r' });
    expect(r.choice.reason).toMatch(/^the contact has no open deal \(1 closed\); /);
    expect(chooseDeals([open], [], { orderBy: 'close_date_asc', limit: 3 }).choice.rule).toBe(
      'contact_open_deal',
    );
    expect(chooseDeals(null, null, { orderBy: 'close_date_asc', limit: 3 }).choice.id).toBeNull();
  });

  it('orders open deals by the rule, ties by last modified, undated last, and says why', () => {
    const deals = [
      deal('1', 'Won', { open: false, stage: 'closedwon', closeDate: t('2026-01-01') }),
      deal('2', 'Feb older', { closeDate: t('2026-02-01'), modifiedAt: t('2026-01-01') }),
      deal('3', 'Feb newer', { closeDate: t('2026-02-01'), modifiedAt: t('2026-01-05') }),
      deal('4', 'Undated', { modifiedAt: t('2026-01-09') }),
      deal('6', 'Jan', { closeDate: t('2026-01-20') }),
    ];
    const rule = { orderBy: 'close_date_asc', limit: 10 } as const;
    expect(rankDeals(deals, rule).chosen.map((d) => d.record.id)).toEqual(['6', '3', '2', '4']);
    expect(
      rankDeals(deals, { orderBy: 'last_modified_desc', limit: 2 }).chosen.map((d) => d.record.id),
    ).toEqual(['4', '3']);
    const choice = chooseDeals(deals, null, rule).choice;
    expect(choice.reason).toBe('4 open deals of the contact; chose Jan: soonest close date 2026-01-20');
    expect(choice.rejected).toContainEqual({ id: '1', label: 'Won', reason: 'closed (closedwon)' });
    expect(choice.rejected).toContainEqual({
      id: '3',
      label: 'Feb newer',
      reason: 'closes later (2026-02-01)',
    });
  });

  it("takes the person's owner, none for a queued lead, else the company's", () => {
    const c = company('a', 'Acme', null);
    expect(ownerIdFor(person('1', 'J', '2026-01-01'), c)).toBe('owner-1');
    expect(ownerIdFor(person('1', 'J', '2026-01-01', { ownerId: null }), c)).toBe('owner-a');
    expect(ownerIdFor(person('1', 'L', '2026-01-01', { ownerId: null, ownedByQueue: true }), c)).toBeNull();
    expect(ownerIdFor(null, c)).toBe('owner-a');
  });
});
