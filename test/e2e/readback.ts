/**
 * Reads what the worker wrote, straight from the in-process sandboxes: the Service's pushed
 * contexts and generated drafts, the CRM records and their links.
 */
import { draftIdOfKey } from '../../src/crm/draftKey.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';

export interface ContextBody {
  source: string;
  contact?: { name?: string; email?: string };
  company?: { name?: string; domain?: string };
  deals?: { id?: string; name?: string }[];
  custom?: Record<string, unknown>;
}

export function pushedContexts(svc: ServiceSandbox, callId: string): ContextBody[] {
  return svc.state.contexts(callId).map((c) => c.body as ContextBody);
}

/** What the activity must carry: the Service's own scores and objection counts for the call. */
export function expectedScores(svc: ServiceSandbox, callId: string) {
  const analysis = svc.state.getCall(callId)?.analysis;
  if (!analysis) throw new Error(`call ${callId} has no analysis`);
  return {
    scoring: analysis.scoring,
    detected: analysis.objections.length,
    handled: analysis.objections.filter((o) => o.handled).length,
  };
}

/** Draft ids the Service generated for a call. */
export function draftIds(svc: ServiceSandbox, callId: string): string[] {
  return svc.state.followups(callId).map((d) => d.id);
}

/** Follow-up generations the Service made for a call (each POST stamps its drafts alike). */
export function followupGenerations(svc: ServiceSandbox, callId: string): number {
  return new Set(svc.state.followups(callId).map((d) => d.created_at)).size;
}

// ---- HubSpot ----------------------------------------------------------------------------------

export function hubspotCallEngagements(hs: HubSpotSandbox, callId?: string) {
  return [...hs.state.store.objects.calls.values()].filter(
    (o) => callId === undefined || o.properties.crmsync_call_id === callId,
  );
}

export function hubspotNotes(hs: HubSpotSandbox, followupIds?: string[]) {
  return [...hs.state.store.objects.notes.values()].filter(
    (o) => followupIds === undefined || followupIds.includes(noteDraftId(o)),
  );
}

/** The Service draft id a note was written for (its key is the call id and the draft id). */
export function noteDraftId(note: { properties: Record<string, unknown> }): string {
  const { crmsync_followup_id: key, crmsync_call_id: callId } = note.properties;
  return draftIdOfKey(String(key), String(callId ?? ''));
}

/** Ids an engagement is linked to, by target type. */
export function hubspotLinks(hs: HubSpotSandbox, fromType: 'calls' | 'notes', id: string) {
  const rows = hs.state.store.associations.filter((a) => a.fromType === fromType && a.fromId === id);
  const ids = (type: string) => [...new Set(rows.filter((a) => a.toType === type).map((a) => a.toId))];
  return { contacts: ids('contacts'), companies: ids('companies'), deals: ids('deals') };
}

/** Per call id, how many engagements carry it (a correct run has 1 everywhere). */
export function hubspotActivityCounts(hs: HubSpotSandbox, callIds: string[]): Record<string, number> {
  return Object.fromEntries(callIds.map((id) => [id, hubspotCallEngagements(hs, id).length]));
}

// ---- Salesforce -------------------------------------------------------------------------------

export function salesforceTasks(sf: SalesforceSandbox, callId: string) {
  return sf.state.store.all('Task').filter((t) => t.CrmSync_Call_Id__c === callId);
}

export function salesforceEmails(sf: SalesforceSandbox, followupIds: string[]) {
  return sf.state.store.all('EmailMessage').filter((e) => followupIds.includes(emailDraftId(e)));
}

/** The Service draft id a draft EmailMessage was written for. */
export function emailDraftId(email: Record<string, unknown>): string {
  return draftIdOfKey(String(email.CrmSync_Followup_Id__c), String(email.CrmSync_Call_Id__c ?? ''));
}

export function salesforceId(
  sf: SalesforceSandbox,
  type: string,
  match: (r: Record<string, unknown>) => boolean,
): string {
  const found = sf.state.store.all(type).find(match);
  if (!found) throw new Error(`no ${type} matches`);
  return found.Id;
}
