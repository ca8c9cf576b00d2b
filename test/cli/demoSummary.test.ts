import { describe, expect, it } from 'vitest';
import {
  contextLines,
  hubspotLandings,
  landingLine,
  salesforceLandings,
  useColor,
  wrap,
} from '../../scripts/demoSummary.js';

describe('the demo summary of where each call landed', () => {
  it('names the HubSpot contact, company and deal a call engagement is associated with, once each', () => {
    const landings = hubspotLandings(['c_123', 'c_404'], {
      calls: [{ id: '1029', properties: { crmsync_call_id: 'c_123' } }],
      notes: [
        { id: 'n1', properties: { crmsync_call_id: 'c_123', crmsync_followup_id: 'f1' } },
        { id: 'n2', properties: { crmsync_call_id: 'c_123', crmsync_followup_id: 'f2' } },
        { id: 'n3', properties: { crmsync_call_id: 'c_other', crmsync_followup_id: 'f3' } },
      ],
      contacts: [
        { id: '51', properties: { firstname: 'Walt', lastname: 'Grant', email: 'walt@wayne.example' } },
      ],
      companies: [{ id: '61', properties: { name: 'Wayne Enterprises' } }],
      deals: [{ id: '71', properties: { dealname: 'Renewal 2027' } }],
      associations: [
        { fromType: 'calls', fromId: '1029', toType: 'contacts', toId: '51' },
        { fromType: 'calls', fromId: '1029', toType: 'companies', toId: '61' },
        { fromType: 'calls', fromId: '1029', toType: 'companies', toId: '61' }, // primary + unlabelled
        { fromType: 'calls', fromId: '1029', toType: 'deals', toId: '71' },
        { fromType: 'calls', fromId: '9999', toType: 'deals', toId: '71' },
      ],
    });
    expect(landings.map((l) => landingLine(l))).toEqual([
      'call c_123: engagement 1029 on Walt Grant (contact), Wayne Enterprises (company), Renewal 2027 (deal); 2 follow-up drafts',
      'call c_404: nothing written to the CRM',
    ]);
    expect(landingLine(landings[1]!, 'skipped: no CRM record matches sam@gmail.com')).toBe(
      'call c_404: nothing written to the CRM (skipped: no CRM record matches sam@gmail.com)',
    );
  });

  it('falls back to the email for a HubSpot contact without a name, and says when nothing is linked', () => {
    const [named, bare] = hubspotLandings(['a', 'b'], {
      calls: [
        { id: '1', properties: { crmsync_call_id: 'a' } },
        { id: '2', properties: { crmsync_call_id: 'b' } },
      ],
      notes: [{ id: 'n', properties: { crmsync_call_id: 'a', crmsync_followup_id: 'f' } }],
      contacts: [{ id: '5', properties: { firstname: '', lastname: null, email: 'x@y.example' } }],
      companies: [],
      deals: [],
      associations: [{ fromType: 'calls', fromId: '1', toType: 'contacts', toId: '5' }],
    });
    expect(landingLine(named!)).toBe('call a: engagement 1 on x@y.example (contact); 1 follow-up draft');
    expect(landingLine(bare!)).toBe('call b: engagement 2 (linked to no record); 0 follow-up drafts');
  });

  it("names a Salesforce Task's Contact, the Opportunity's Account and the Opportunity; a Lead alone", () => {
    const landings = salesforceLandings(['c1', 'c2'], {
      Task: [
        { Id: '00T1', CrmSync_Call_Id__c: 'c1', WhoId: '003A', WhatId: '006A' },
        { Id: '00T2', CrmSync_Call_Id__c: 'c2', WhoId: '00QA', WhatId: null },
      ],
      EmailMessage: [{ Id: '02s1', CrmSync_Call_Id__c: 'c1', CrmSync_Followup_Id__c: 'f1' }],
      Contact: [{ Id: '003A', FirstName: 'Walt', LastName: 'Grant' }],
      Lead: [{ Id: '00QA', FirstName: 'Lena', LastName: 'Lead' }],
      Account: [{ Id: '001A', Name: 'Wayne Enterprises' }],
      Opportunity: [{ Id: '006A', Name: 'Renewal 2027', AccountId: '001A' }],
    });
    expect(landings.map((l) => landingLine(l))).toEqual([
      'call c1: Task 00T1 on Walt Grant (Contact), Wayne Enterprises (Account), Renewal 2027 (Opportunity); 1 follow-up draft',
      'call c2: Task 00T2 on Lena Lead (Lead); 0 follow-up drafts',
    ]);
  });

  it('names the Account when a Salesforce Task has no Opportunity', () => {
    const [l] = salesforceLandings(['c1'], {
      Task: [{ Id: '00T1', CrmSync_Call_Id__c: 'c1', WhoId: '003A', WhatId: '001A' }],
      EmailMessage: [],
      Contact: [{ Id: '003A', Name: 'Walt Grant' }],
      Lead: [],
      Account: [{ Id: '001A', Name: 'Wayne Enterprises' }],
      Opportunity: [],
    });
    expect(landingLine(l!)).toBe(
      'call c1: Task 00T1 on Walt Grant (Contact), Wayne Enterprises (Account); 0 follow-up drafts',
    );
  });
});

describe('the demo summary of the context pushed to a live call', () => {
  it('shows every part and every deal, long values ending in an ellipsis, wrapped at 100 columns', () => {
    const deals = Array.from({ length: 5 }, (_, i) => ({ name: `Deal ${i + 1}`, owner: 'ann@acme.example' }));
    const lines = contextLines({
      contact: { name: 'Walt Grant', email: 'walt@wayne.example', title: '' },
      company: {},
      deals,
      custom: { notes: 'x'.repeat(200), tags: ['a', 'b'], matched_by: 'email' },
    });
    expect(lines).toEqual([
      '  contact  name: Walt Grant, email: walt@wayne.example',
      '  company  (nothing)',
      ...deals.map((d, i) => `  deal ${i + 1}   name: ${d.name}, owner: ann@acme.example`),
      `  custom   notes: ${'x'.repeat(69)}…,`,
      '           tags: ["a","b"], matched_by: email',
    ]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('says when there is no open deal and leaves out an empty custom part', () => {
    expect(contextLines({ contact: { email: 'a@b.example' }, company: {}, deals: [], custom: {} })).toEqual([
      '  contact  email: a@b.example',
      '  company  (nothing)',
      '  deals    (no open deal)',
    ]);
  });
});

describe('wrapping the demo summary at 100 columns', () => {
  it('breaks only after a separator, indenting what follows, and leaves a short line alone', () => {
    const line =
      'call call_018ce9528ad1e65f: engagement 1029 on Jane Doe (contact), Acme Corp (company), Acme - Add-on (deal); 2 follow-up drafts';
    expect(wrap(line, 2)).toEqual([
      'call call_018ce9528ad1e65f: engagement 1029 on Jane Doe (contact), Acme Corp (company),',
      '  Acme - Add-on (deal); 2 follow-up drafts',
    ]);
    expect(wrap('call a: nothing written to the CRM (skipped)', 2)).toEqual([
      'call a: nothing written to the CRM (skipped)',
    ]);
    // A piece longer than the width stays whole on its own line.
    expect(wrap(`${'y'.repeat(120)}, z`, 4)).toEqual(['y'.repeat(120) + ',', '    z']);
  });
});

describe('demo colour', () => {
  it('styles only a terminal, and not when NO_COLOR is set', () => {
    expect(useColor(true, {})).toBe(true);
    expect(useColor(false, {})).toBe(false);
    expect(useColor(undefined, {})).toBe(false);
    expect(useColor(true, { NO_COLOR: '1' })).toBe(false);
    // no-color.org: an empty NO_COLOR does not disable colour.
    expect(useColor(true, { NO_COLOR: '' })).toBe(true);
  });
});
