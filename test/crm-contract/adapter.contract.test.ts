/**
 * The CRM adapter contract: the same cases against the HubSpot and the Salesforce sandbox, through
 * the real SDKs. Both sandboxes seed the same people, companies and deals for these cases (Jane at
 * Acme, Walt at Wayne whose only own deal is closed, Rita without company or first name, Gilfoyle at
 * Hooli without a website...), so expectations are written once, by name.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MatchRule } from '../../src/crm/types.js';
import { lookupKey, type CrmLookup, type Participant } from '../../src/crm/types.js';
import {
  buildActivity,
  buildContext,
  buildDealWrite,
  buildFollowups,
  dealRuleFor,
  loadMappings,
  lookupFieldsFor,
  requiredFields,
} from '../../src/mapping/index.js';
import { draftKey } from '../../src/crm/draftKey.js';
import { linksOf, writtenQueryFor } from '../../src/mapping/writeback.js';
import { outcomeOf } from '../../src/pipelines/outcome.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { hubSpotDriver, salesforceDriver, type CrmDriver } from './drivers.js';

interface Expected {
  who: Participant;
  contact: [string | null, MatchRule];
  company: [string | null, MatchRule];
  deal: [string | null, MatchRule];
}

const CASES: Expected[] = [
  {
    who: { email: 'Jane.Doe@ACME.example' },
    contact: ['Jane Doe', 'contact_email'],
    company: ['Acme Corp', 'contact_company'],
    deal: [
      expect.stringMatching(/^Acme - /) as unknown as string,
      expect.stringMatching(/open_deal$/) as unknown as MatchRule,
    ],
  },
  {
    who: { email: 'walt@wayne.example' },
    contact: ['Walt Grant', 'contact_email'],
    company: ['Wayne Enterprises', 'contact_company'],
    // His only deal of his own is closed-won: the company's open deals, soonest close first.
    deal: ['Wayne - Renewal 2027', 'company_open_deal'],
  },
  {
    who: { email: 'rita@rockets.example' },
    contact: ['Rocket', 'contact_email'],
    company: ['Rocket Labs', 'email_domain'],
    deal: ['Rocket Labs - Launch', 'company_open_deal'],
  },
  {
    who: { email: 'gilfoyle@hooli.example' },
    contact: ['Gilfoyle', 'contact_email'],
    company: ['Hooli', 'contact_company'],
    deal: [null, 'none'],
  },
  {
    who: { email: 'newperson@initech.example' },
    contact: [null, 'none'],
    company: ['Initech', 'email_domain'],
    deal: [expect.stringMatching(/^Initech - /) as unknown as string, 'company_open_deal'],
  },
  {
    who: { email: 'gavin@yahoo.com', company: 'HOOLI' },
    contact: [null, 'none'],
    company: ['Hooli', 'company_name'],
    deal: [null, 'none'],
  },
  { who: { email: 'sam@gmail.com' }, contact: [null, 'none'], company: [null, 'none'], deal: [null, 'none'] },
  {
    who: { email: 'nobody@nowhere.example' },
    contact: [null, 'none'],
    company: [null, 'none'],
    deal: [null, 'none'],
  },
];

describe.each([
  ['HubSpot', hubSpotDriver],
  ['Salesforce (refresh token)', () => salesforceDriver('refresh_token')],
  ['Salesforce (JWT bearer)', () => salesforceDriver('jwt_bearer')],
  ['Salesforce (client credentials)', () => salesforceDriver('client_credentials')],
] as const)('CRM adapter contract: %s', (_name, start) => {
  let driver: CrmDriver;
  beforeAll(async () => {
    driver = await start();
  });
  afterAll(() => driver.close());
  beforeEach(() => driver.reset());

  const mapping = () => loadMappings(CONFIG_DIR, driver.crm);
  const lookup = (p: Participant) =>
    driver.adapter().lookup(p, lookupFieldsFor(mapping()), dealRuleFor(mapping()));
  const summary = (l: CrmLookup) => ({
    contact: [l.decision!.contact.label, l.decision!.contact.rule],
    company: [l.decision!.company.label, l.decision!.company.rule],
    deal: [l.decision!.deal.label, l.decision!.deal.rule],
  });

  it.each(CASES.map((c) => [c.who.email, c] as const))(
    'matches %s by the documented rules',
    async (_e, c) => {
      const found = await lookup(c.who);
      expect(summary(found)).toEqual({ contact: c.contact, company: c.company, deal: c.deal });
      // What the rest of the worker uses agrees with the decision.
      expect(found.contact?.id ?? null).toBe(found.decision!.contact.id);
      expect(found.company?.id ?? null).toBe(found.decision!.company.id);
      expect(found.deals[0]?.id ?? null).toBe(found.decision!.deal.id);
    },
  );

  it('explains a choice among several open deals, naming the ones not chosen', async () => {
    const walt = await lookup({ email: 'walt@wayne.example' });
    expect(walt.decision!.deal.reason).toMatch(
      /2 open deals of the company; chose Wayne - Renewal 2027: soonest close date 2026-12-01$/,
    );
    expect(walt.decision!.deal.rejected).toContainEqual(
      expect.objectContaining({ label: 'Wayne - Gotham Expansion', reason: 'closes later (2027-03-01)' }),
    );
  });

  it("pushes each deal's own owner, read with the contact's, not the raw owner id", async () => {
    // Rita is owned by one seller; her company's deal by another (Olivia) in both sandboxes.
    const found = await lookup({ email: 'rita@rockets.example' });
    const context = await buildContext(mapping(), {
      call: { id: 'call_owner', created_at: '2026-11-20T10:00:00Z' },
      lookup: found,
    });
    expect(context.deals.map((d) => d.owner)).toEqual([
      driver.crm === 'hubspot' ? 'olivia.owner@seller.example' : 'Olivia Owner',
    ]);
    expect(context.custom.contact_owner).not.toMatch(/olivia/i);
    expect(found.deals[0]!.owner?.id).not.toBe(found.owner?.id);
  });

  it('gives every participant of one batch what a lookup of each gives', async () => {
    const many = await driver.adapter().lookupMany(
      CASES.map((c) => c.who),
      lookupFieldsFor(mapping()),
      dealRuleFor(mapping()),
    );
    for (const c of CASES) expect(many.get(lookupKey(c.who.email)), c.who.email).toEqual(await lookup(c.who));
  });

  it('writes one activity per call, however often it is written, and one record per draft', async () => {
    const found = await lookup({ email: 'walt@wayne.example' });
    const call = {
      id: `call-contract-${driver.crm}`,
      created_at: '2026-11-20T10:00:00Z',
      participant: { email: 'walt@wayne.example', name: 'Walt Grant' },
      scoring: { overall: 81 },
    };
    const drafts = [
      { id: 'd-1', subject: 'Thanks', body: 'Hi Walt', to: ['walt@wayne.example'] },
      { id: 'd-2', subject: 'Pricing', body: 'As discussed', to: [] },
    ];
    const input = { call, analysis: { summary: 'Renewal talk' }, followups: drafts, lookup: found };
    const adapter = driver.adapter();
    for (let i = 0; i < 3; i++) {
      const [r] = await adapter.upsertActivities([await buildActivity(mapping(), input)]);
      expect(r).toMatchObject({ ok: true, created: i === 0 });
      const notes = await adapter.upsertFollowups(await buildFollowups(mapping(), input));
      expect(notes.every((n) => n.ok)).toBe(true);
    }
    expect((await driver.activities()).filter((a) => a.key === call.id)).toHaveLength(1);
    expect((await driver.followups()).map((f) => f.key).sort()).toEqual(
      ['d-1', 'd-2'].map((d) => draftKey(call.id, d)),
    );
  });

  // Issue 22, defect 5: the Service promises no draft id unique across calls.
  it('keeps drafts of two calls that share draft ids apart, in one batch, and finds each call its own', async () => {
    const found = await lookup({ email: 'walt@wayne.example' });
    const inputs = ['a', 'b'].map((n) => ({
      call: { id: `call-same-drafts-${n}-${driver.crm}`, created_at: '2026-11-20T10:00:00Z' },
      analysis: null,
      followups: [{ id: 'fu-1', subject: `Thanks ${n}`, body: `For call ${n}`, to: [] }],
      lookup: found,
    }));
    const adapter = driver.adapter();
    await adapter.upsertActivities(await Promise.all(inputs.map((i) => buildActivity(mapping(), i))));
    const writes = (await Promise.all(inputs.map((i) => buildFollowups(mapping(), i)))).flat();
    const results = await adapter.upsertFollowups(writes);
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    const ids = results.map((r) => (r.ok ? r.id : ''));
    expect(new Set(ids).size).toBe(2);
    const held = await adapter.findWritten(
      inputs.map((i) => i.call.id),
      writtenQueryFor(mapping()),
    );
    inputs.forEach((input, n) =>
      expect(held.get(input.call.id)?.followups).toEqual([{ draftId: 'fu-1', crmId: ids[n] }]),
    );
  });

  it('finds what it holds for a call (the activity and its drafts), and nothing for an unknown one', async () => {
    const found = await lookup({ email: 'gilfoyle@hooli.example' });
    const call = {
      id: `call-held-${driver.crm}`,
      created_at: '2026-11-21T10:00:00Z',
      participant: { email: 'gilfoyle@hooli.example' },
    };
    const drafts = [{ id: 'held-1', subject: 'Next steps', body: 'Hi', to: [] }];
    const input = { call, analysis: null, followups: drafts, lookup: found };
    const [activity] = await driver.adapter().upsertActivities([await buildActivity(mapping(), input)]);
    const [note] = await driver.adapter().upsertFollowups(await buildFollowups(mapping(), input));
    const held = await driver
      .adapter()
      .findWritten([call.id, 'call-never-written'], writtenQueryFor(mapping()));
    expect([...held.keys()]).toEqual([call.id]);
    expect(held.get(call.id)).toEqual({
      activityId: activity!.ok ? activity!.id : 'x',
      followups: [{ draftId: 'held-1', crmId: note!.ok ? note!.id : 'x' }],
    });
  });

  it('updates deals by id with their signals in one batch; a deal the CRM does not have fails alone', async () => {
    const who = { email: 'jane.doe@acme.example' };
    const dealId = (await lookup(who)).deals[0]!.id;
    const started = Date.parse('2026-11-22T10:00:00Z');
    const write = await buildDealWrite(mapping(), {
      dealId,
      calls: [
        {
          callId: 'c-1',
          startedAt: started,
          overallScore: 64,
          objectionsDetected: 2,
          objectionsHandled: 1,
          nextSteps: [],
        },
        {
          callId: 'c-2',
          startedAt: started + 86_400_000,
          overallScore: 88,
          objectionsDetected: 1,
          objectionsHandled: 0,
          nextSteps: ['Send the order form'],
        },
      ],
    });
    const unknown = driver.crm === 'hubspot' ? '999999999' : '006000000000000AAA';
    const results = await driver
      .adapter()
      .updateDeals([write, { dealId: unknown, properties: write.properties }]);
    expect(results[0]).toMatchObject({ key: dealId, ok: true });
    expect(results[1]).toMatchObject({ key: unknown, ok: false });

    // Read back through the adapter's own lookup, asking for the signal fields too...
    const names = Object.keys(write.properties);
    const fields = lookupFieldsFor(mapping());
    const reread = await driver
      .adapter()
      .lookup(who, { ...fields, deal: [...fields.deal, ...names] }, dealRuleFor(mapping()));
    const shown = reread.deals.find((d) => d.id === dealId)!.properties;
    const text = (props: Record<string, unknown>) =>
      Object.fromEntries(names.map((n) => [n, String(props[n])]));
    expect(text(shown)).toEqual(text(write.properties));
    expect(text(shown)).toMatchObject({ [names[0]!]: '2026-11-23', [names[1]!]: '88', [names[2]!]: '76' });
    // ...and through readDeals, which leaves out the deal the CRM does not have.
    const read = await driver.adapter().readDeals([dealId, unknown], names);
    expect([...read.keys()]).toEqual([dealId]);
    expect(text(read.get(dealId)!)).toEqual(text(write.properties));
  });

  it('passes its setup check for the fields the shipped mapping needs', async () => {
    const report = await driver.adapter().verifySetup(requiredFields(mapping()));
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('moves an activity to the deal another rule chooses: once, and one failure stays its own', async () => {
    const walt = { email: 'walt@wayne.example' };
    const soonest = await lookup(walt);
    const latest = await driver
      .adapter()
      .lookup(walt, lookupFieldsFor(mapping()), { orderBy: 'close_date_desc', limit: 3 });
    expect([soonest.decision!.deal.label, latest.decision!.deal.label]).toEqual([
      'Wayne - Renewal 2027',
      'Wayne - Gotham Expansion',
    ]);
    const call = { id: `call-moved-${driver.crm}`, created_at: '2026-11-22T10:00:00Z', participant: walt };
    const input = { call, analysis: null, followups: [], lookup: soonest };
    const [written] = await driver.adapter().upsertActivities([await buildActivity(mapping(), input)]);
    if (!written?.ok) throw new Error('activity not written');
    const move = { callId: call.id, activityId: written.id, from: linksOf(soonest), to: linksOf(latest) };
    const missing = {
      ...move,
      callId: 'call-gone',
      activityId: driver.crm === 'hubspot' ? '999999' : '00T000000000999AAA',
    };

    const dry = await driver.adapter().moveActivityLinks([move], { dryRun: true });
    expect(dry).toEqual([{ key: call.id, ok: true, writes: expect.any(Number) as number }]);
    const [first, gone] = await driver.adapter().moveActivityLinks([move, missing]);
    expect(first).toEqual(dry[0]);
    expect(first).toMatchObject({ writes: expect.toSatisfy((n: number) => n > 0) as number });
    expect(gone).toMatchObject({ key: 'call-gone', ok: false });
    // The CRM now shows the new links: the same move again has nothing to write.
    expect(await driver.adapter().moveActivityLinks([move])).toEqual([{ key: call.id, ok: true, writes: 0 }]);
    // And back, so the move did change what the CRM holds.
    const back = await driver.adapter().moveActivityLinks([{ ...move, from: move.to, to: move.from }]);
    expect(back[0]).toMatchObject({ ok: true, writes: expect.toSatisfy((n: number) => n > 0) as number });
  });

  it('moves a follow-up draft as it moves the activity (rematch moves them together)', async () => {
    const walt = { email: 'walt@wayne.example' };
    const soonest = await lookup(walt);
    const latest = await driver
      .adapter()
      .lookup(walt, lookupFieldsFor(mapping()), { orderBy: 'close_date_desc', limit: 3 });
    const call = {
      id: `call-draft-moved-${driver.crm}`,
      created_at: '2026-11-22T10:00:00Z',
      participant: walt,
    };
    const followups = [{ id: 'fu-moved', subject: 'Next steps', body: 'Hi', to: [] }];
    const [draft] = await driver
      .adapter()
      .upsertFollowups(await buildFollowups(mapping(), { call, analysis: null, followups, lookup: soonest }));
    if (!draft?.ok) throw new Error('draft not written');
    const move = {
      callId: call.id,
      activityId: draft.id,
      record: mapping().writeback.followups!.kind,
      from: linksOf(soonest),
      to: linksOf(latest),
    };
    const [first] = await driver.adapter().moveActivityLinks([move]);
    expect(first).toMatchObject({
      key: call.id,
      ok: true,
      writes: expect.toSatisfy((n: number) => n > 0) as number,
    });
    expect(await driver.adapter().moveActivityLinks([move])).toEqual([{ key: call.id, ok: true, writes: 0 }]);
  });

  it("recovers from the CRM's rate limit: the write waits, then lands once", async () => {
    const adapter = driver.adapterOnFakeClock();
    const input = {
      call: { id: 'call-rate', created_at: '2026-11-20T10:00:00Z' },
      analysis: null,
      followups: [],
      lookup: await lookup({ email: 'rita@rockets.example' }),
    };
    const write = await buildActivity(mapping(), input);
    await driver.refuseNextWriteForRate();
    const first = await adapter.upsertActivities([write]).then(
      ([r]) => (r!.ok ? null : r!.error),
      (e: unknown) => e,
    );
    const outcome = outcomeOf(first, driver.clock.now());
    expect(outcome.kind).toBe('wait'); // the job is put back, not failed or retried at once
    await driver.clock.advance((outcome as { delayMs: number }).delayMs + 1);
    const [second] = await adapter.upsertActivities([write]);
    expect(second).toMatchObject({ ok: true });
    expect((await driver.activities()).filter((a) => a.key === 'call-rate')).toHaveLength(1);
  });
});
