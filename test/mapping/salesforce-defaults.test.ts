import { describe, expect, it } from 'vitest';
import { buildContext } from '../../src/mapping/context.js';
import { loadMappings } from '../../src/mapping/load.js';
import { dealRuleFor, lookupFieldsFor } from '../../src/mapping/lookupFields.js';
import { requiredFields } from '../../src/mapping/requirements.js';
import { buildActivity, buildFollowups } from '../../src/mapping/writeback.js';
import { analysis, call, CONFIG_DIR, drafts, lookupFor } from './helpers.js';

describe('shipped Salesforce mapping', () => {
  const mapping = loadMappings(CONFIG_DIR, 'salesforce');
  const lookup = lookupFor('salesforce');

  it('pushes the context, with the bare domain from Website', async () => {
    const body = await buildContext(mapping, { call: call(), lookup });
    expect(body).toEqual({
      source: 'salesforce',
      contact: {
        name: 'Dana Whitfield',
        email: 'dana@northwind.example',
        title: 'VP Engineering',
        phone: '+1 555 0100',
      },
      company: { name: 'Northwind', domain: 'northwind.example', industry: 'Technology', size: 250 },
      deals: [
        {
          id: '006000000000001AAA',
          name: 'Northwind - 40 seats',
          stage: 'Negotiation/Review',
          amount: 48000.46,
          close_date: '2025-03-31',
          owner: 'Kim Closer', // the deal's owner, not the contact's (was the raw OwnerId)
        },
      ],
      custom: { contact_owner: 'Sam Seller', matched_by: 'email' },
    });
  });

  it('maps a Lead: contact and lead fields from the Lead, company name from Lead.Company', async () => {
    const leadLookup = {
      contact: {
        type: 'lead' as const,
        id: '00Q000000000001AAA',
        properties: {
          FirstName: 'Dana',
          LastName: 'Whitfield',
          Email: 'dana@northwind.example',
          Company: 'Northwind',
          Status: 'Working',
        },
      },
      company: null,
      deals: [],
      owner: null,
      matchedBy: 'lead_email' as const,
    };
    const body = await buildContext(mapping, { call: call(), lookup: leadLookup });
    expect(body.contact).toEqual({ name: 'Dana Whitfield', email: 'dana@northwind.example' });
    expect(body.company).toEqual({ name: 'Northwind' });
    expect(body.custom).toEqual({ lead_status: 'Working', matched_by: 'lead_email' });
    const write = await buildActivity(mapping, {
      call: call(),
      analysis: analysis(),
      followups: [],
      lookup: leadLookup,
    });
    expect(write.links).toEqual({ contactId: '00Q000000000001AAA', contactType: 'lead' });
  });

  it('writes a completed call Task', async () => {
    const write = await buildActivity(mapping, { call: call(), analysis: analysis(), followups: [], lookup });
    expect(write.idField).toBe('CrmSync_Call_Id__c');
    expect(write.links).toEqual({
      contactId: '003000000000001AAA',
      contactType: 'contact',
      companyId: '001000000000001AAA',
      dealId: '006000000000001AAA',
    });
    expect(write.properties).toEqual({
      Subject: 'Coaching call with Dana Whitfield',
      Description:
        'Dana wants SSO & audit logs before Q2 <renewal>.\n\n' +
        'Scores: overall 79 · rapport 86 · discovery 73 · objection handling 65 · closing 71\n\n' +
        'Objections:\n- price: Too expensive for 40 seats (handled)\n' +
        '- timing: Budget frozen until April (not handled)\n- security: Needs SOC 2 report (handled)\n\n' +
        'Next steps:\n- Send SOC 2 report\n- Book pricing review',
      ActivityDate: '2025-03-04',
      CallDurationInSeconds: 1845,
      Status: 'Completed',
      TaskSubtype: 'Call',
      Type: 'Call',
      CrmSync_Score_Overall__c: 79,
      CrmSync_Score_Rapport__c: 86,
      CrmSync_Score_Discovery__c: 73,
      CrmSync_Score_Objection_Handling__c: 65,
      CrmSync_Score_Closing__c: 71,
      CrmSync_Objections_Detected__c: 3,
      CrmSync_Objections_Handled__c: 2,
      CrmSync_Call_Id__c: 'call_01HZX4',
    });
  });

  it('writes each follow-up as a draft EmailMessage', async () => {
    const writes = await buildFollowups(mapping, {
      call: call(),
      analysis: analysis(),
      followups: drafts(),
      lookup,
    });
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({
      kind: 'email',
      draftId: 'fu_7781',
      key: 'call_01HZX4:fu_7781',
      idField: 'CrmSync_Followup_Id__c',
    });
    expect(writes[0]?.properties).toEqual({
      Subject: "Next steps after today's call",
      TextBody: 'Hi Dana,\n\nThanks for your time. Attached is our SOC 2 report.\n\nBest,\nSam',
      ToAddress: 'dana@northwind.example; cfo@northwind.example',
      Status: '5',
      CrmSync_Followup_Id__c: 'call_01HZX4:fu_7781',
      // The call's id: how a fresh database finds the drafts already written (findWritten).
      CrmSync_Call_Id__c: 'call_01HZX4',
    });
  });

  it('reads Lead fields separately and never asks for CurrencyIsoCode or Id', () => {
    const fields = lookupFieldsFor(mapping);
    expect(fields.contact).toEqual([
      'FirstName',
      'LastName',
      'Email',
      'AccountId',
      'OwnerId',
      'Title',
      'Phone',
    ]);
    expect(fields.lead).toEqual(['FirstName', 'LastName', 'Email', 'Company', 'Status', 'Title', 'Phone']);
    expect(fields.company).toEqual(['Name', 'Website', 'OwnerId', 'Industry', 'NumberOfEmployees']);
    expect(fields.deal).toEqual([
      'Name',
      'StageName',
      'Amount',
      'CloseDate',
      'IsClosed',
      'LastModifiedDate',
      'OwnerId',
    ]);
    expect(fields.owner).toEqual(['Name', 'Email']);
    expect(dealRuleFor(mapping)).toEqual({ orderBy: 'close_date_asc', limit: 3 });
  });

  it('lists the custom fields doctor must check, on Task, EmailMessage and Opportunity', () => {
    expect(requiredFields(mapping)).toEqual([
      { object: 'Task', name: 'CrmSync_Call_Id__c', type: 'string', unique: true, label: 'CRM Sync call id' },
      { object: 'Task', name: 'CrmSync_Score_Overall__c', type: 'number', label: 'CRM Sync Score Overall' },
      { object: 'Task', name: 'CrmSync_Score_Rapport__c', type: 'number', label: 'CRM Sync Score Rapport' },
      {
        object: 'Task',
        name: 'CrmSync_Score_Discovery__c',
        type: 'number',
        label: 'CRM Sync Score Discovery',
      },
      {
        object: 'Task',
        name: 'CrmSync_Score_Objection_Handling__c',
        type: 'number',
        label: 'CRM Sync Score Objection Handling',
      },
      { object: 'Task', name: 'CrmSync_Score_Closing__c', type: 'number', label: 'CRM Sync Score Closing' },
      {
        object: 'Task',
        name: 'CrmSync_Objections_Detected__c',
        type: 'number',
        label: 'CRM Sync Objections Detected',
      },
      {
        object: 'Task',
        name: 'CrmSync_Objections_Handled__c',
        type: 'number',
        label: 'CRM Sync Objections Handled',
      },
      {
        object: 'EmailMessage',
        name: 'CrmSync_Followup_Id__c',
        type: 'string',
        unique: true,
        label: 'CRM Sync follow-up id',
      },
      { object: 'EmailMessage', name: 'CrmSync_Call_Id__c', type: 'string', label: 'CRM Sync Call Id' },
      // Stamped by crm-sync before it asks for follow-ups (issue 22, defect 10).
      {
        object: 'Task',
        name: 'CrmSync_Followups_Generated_At__c',
        type: 'datetime',
        label: 'CRM Sync follow-ups generated at',
      },
      // The deal section's fields, on the Opportunity.
      {
        object: 'Opportunity',
        name: 'CrmSync_Last_Call_Date__c',
        type: 'date',
        label: 'CRM Sync Last Call Date',
      },
      {
        object: 'Opportunity',
        name: 'CrmSync_Last_Call_Score__c',
        type: 'number',
        label: 'CRM Sync Last Call Score',
      },
      {
        object: 'Opportunity',
        name: 'CrmSync_Average_Score__c',
        type: 'number',
        label: 'CRM Sync Average Score',
      },
      {
        object: 'Opportunity',
        name: 'CrmSync_Open_Objections__c',
        type: 'number',
        label: 'CRM Sync Open Objections',
      },
      {
        object: 'Opportunity',
        name: 'CrmSync_Last_Next_Step__c',
        type: 'string',
        label: 'CRM Sync Last Next Step',
      },
    ]);
  });
});
