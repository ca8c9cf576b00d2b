import { describe, expect, it } from 'vitest';
import { buildContext } from '../../src/mapping/context.js';
import { loadMappings } from '../../src/mapping/load.js';
import { dealRuleFor, lookupFieldsFor } from '../../src/mapping/lookupFields.js';
import { requiredFields } from '../../src/mapping/requirements.js';
import { buildActivity, buildFollowups } from '../../src/mapping/writeback.js';
import { analysis, call, CONFIG_DIR, drafts, lookupFor } from './helpers.js';

const NOW = Date.parse('2025-03-04T17:00:00Z');

describe('shipped HubSpot mapping', () => {
  const mapping = loadMappings(CONFIG_DIR, 'hubspot');
  const lookup = lookupFor('hubspot');

  it('pushes contact, company, ordered deals and custom values as context', async () => {
    const body = await buildContext(mapping, { call: call(), lookup, now: NOW });
    expect(body).toEqual({
      source: 'hubspot',
      contact: {
        name: 'Dana Whitfield',
        email: 'dana@northwind.example',
        title: 'VP Engineering',
        phone: '+1 555 0100',
      },
      company: { name: 'Northwind', domain: 'northwind.example', industry: 'COMPUTER_SOFTWARE', size: 250 },
      deals: [
        {
          id: '3001',
          name: 'Northwind - 40 seats',
          stage: 'contractsent',
          amount: 48000.46,
          currency: 'USD',
          close_date: '2025-03-31',
          owner: 'sam@seller.example',
        },
        {
          id: '3002',
          name: 'Northwind - expansion',
          stage: 'appointmentscheduled',
          amount: 12000,
          currency: 'USD',
          close_date: '2025-07-01',
          owner: 'kim@seller.example', // the deal's owner, not the contact's (was the raw id)
        },
      ],
      custom: { lifecycle_stage: 'opportunity', contact_owner: 'sam@seller.example', matched_by: 'email' },
    });
  });

  it('writes a completed Call engagement with the summary, five scores and objections', async () => {
    const write = await buildActivity(mapping, { call: call(), analysis: analysis(), followups: [], lookup });
    expect(write.callId).toBe('call_01HZX4');
    expect(write.idField).toBe('crmsync_call_id');
    expect(write.links).toEqual({
      contactId: '51',
      contactType: 'contact',
      companyId: '801',
      dealId: '3001',
    });
    expect(write.properties).toEqual({
      hs_timestamp: '2025-03-04T15:30:00.000Z',
      hs_call_title: 'Coaching call with Dana Whitfield',
      hs_call_body:
        'Dana wants SSO &amp; audit logs before Q2 &lt;renewal&gt;.<br><br>' +
        'Scores: overall 79 · rapport 86 · discovery 73 · objection handling 65 · closing 71<br><br>' +
        'Objections:<br>- price: Too expensive for 40 seats (handled)<br>' +
        '- timing: Budget frozen until April (not handled)<br>- security: Needs SOC 2 report (handled)<br><br>' +
        'Next steps:<br>- Send SOC 2 report<br>- Book pricing review',
      hs_call_duration: '1845000',
      hs_call_status: 'COMPLETED',
      hs_call_direction: 'OUTBOUND',
      crmsync_score_overall: 79,
      crmsync_score_rapport: 86,
      crmsync_score_discovery: 73,
      crmsync_score_objection_handling: 65,
      crmsync_score_closing: 71,
      crmsync_objections_detected: 3,
      crmsync_objections_handled: 2,
      crmsync_call_id: 'call_01HZX4',
    });
  });

  it('falls back to the call scores when there is no analysis yet', async () => {
    const write = await buildActivity(mapping, { call: call(), analysis: null, followups: [], lookup });
    expect(write.properties.crmsync_score_overall).toBe(78);
    expect(write.properties.hs_call_body).toBe(
      'Scores: overall 78 · rapport 85 · discovery 72 · objection handling 64 · closing 70',
    );
  });

  it('writes each follow-up draft as a Note keyed on the draft id', async () => {
    const writes = await buildFollowups(mapping, {
      call: call(),
      analysis: analysis(),
      followups: drafts(),
      lookup,
    });
    expect(writes).toEqual([
      {
        callId: 'call_01HZX4',
        draftId: 'fu_7781',
        // The upsert key: the call id and the draft id (src/crm/draftKey.ts).
        key: 'call_01HZX4:fu_7781',
        kind: 'note',
        idField: 'crmsync_followup_id',
        links: { contactId: '51', contactType: 'contact', companyId: '801', dealId: '3001' },
        properties: {
          hs_timestamp: '2025-03-04T16:05:00.000Z',
          hs_note_body:
            'Follow-up draft (not sent): Next steps after today&#39;s call<br><br>' +
            'To: dana@northwind.example, cfo@northwind.example<br><br>' +
            'Hi Dana,<br><br>Thanks for your time. Attached is our SOC 2 report.<br><br>Best,<br>Sam',
          crmsync_followup_id: 'call_01HZX4:fu_7781',
          // The call's id: how a fresh database finds the drafts already written (findWritten).
          crmsync_call_id: 'call_01HZX4',
        },
      },
    ]);
  });

  it('asks the lookup for the properties the expressions read plus those the adapter needs', () => {
    const fields = lookupFieldsFor(mapping);
    expect(fields.contact).toEqual(
      expect.arrayContaining(['email', 'firstname', 'lastname', 'jobtitle', 'phone', 'lifecyclestage']),
    );
    expect(fields.company).toEqual(
      expect.arrayContaining(['name', 'domain', 'industry', 'numberofemployees']),
    );
    expect(fields.deal).toEqual(
      expect.arrayContaining([
        'dealname',
        'dealstage',
        'amount',
        'deal_currency_code',
        'closedate',
        'hs_is_closed',
        'hs_lastmodifieddate',
        'hubspot_owner_id',
      ]),
    );
    expect(fields.owner).toEqual(['email']);
    expect(Object.values(fields).flat()).not.toContain('id');
    expect(dealRuleFor(mapping)).toEqual({ orderBy: 'close_date_asc', limit: 3 });
  });

  it('lists the custom properties doctor must check', () => {
    const required = requiredFields(mapping);
    expect(required.map((r) => `${r.object}.${r.name}:${r.type}${r.unique ? ':unique' : ''}`)).toEqual([
      'calls.crmsync_call_id:string:unique',
      'calls.crmsync_score_overall:number',
      'calls.crmsync_score_rapport:number',
      'calls.crmsync_score_discovery:number',
      'calls.crmsync_score_objection_handling:number',
      'calls.crmsync_score_closing:number',
      'calls.crmsync_objections_detected:number',
      'calls.crmsync_objections_handled:number',
      'notes.crmsync_followup_id:string:unique',
      'notes.crmsync_call_id:string',
      // Stamped by crm-sync before it asks for follow-ups (issue 22, defect 10).
      'calls.crmsync_followups_generated_at:datetime',
      'deals.crmsync_last_call_date:date',
      'deals.crmsync_last_call_score:number',
      'deals.crmsync_average_score:number',
      'deals.crmsync_open_objections:number',
      'deals.crmsync_last_next_step:string',
    ]);
  });
});
