/**
 * What a CRM sandbox holds for a call, the same questions asked of HubSpot and Salesforce, so the
 * written-once checks run against either: the activities carrying a call id (with the scores
 * written on them) and how many records carry a follow-up draft.
 */
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { SyncState } from '../../src/sync/states.js';
import {
  draftIds,
  expectedScores,
  followupGenerations,
  hubspotCallEngagements,
  hubspotNotes,
  salesforceEmails,
  salesforceTasks,
} from '../../test/e2e/readback.js';
import type { Verdict } from '../scenario.js';

/** Scores as written on an activity, as strings (HubSpot stores every value as one). */
export interface WrittenScores {
  overall: string;
  detected: string;
  handled: string;
}

export interface CrmReadback {
  name: string;
  activities(callId: string): WrittenScores[];
  /** Records carrying this draft id (1 when attached once). */
  draftCopies(draftId: string): number;
}

export function hubspotReadback(hs: HubSpotSandbox): CrmReadback {
  return {
    name: 'HubSpot',
    activities: (callId) =>
      hubspotCallEngagements(hs, callId).map(({ properties: p }) => ({
        overall: String(p.crmsync_score_overall),
        detected: String(p.crmsync_objections_detected),
        handled: String(p.crmsync_objections_handled),
      })),
    draftCopies: (draftId) => hubspotNotes(hs, [draftId]).length,
  };
}

export function salesforceReadback(sf: SalesforceSandbox): CrmReadback {
  return {
    name: 'Salesforce',
    activities: (callId) =>
      salesforceTasks(sf, callId).map((t) => ({
        overall: String(t.CrmSync_Score_Overall__c),
        detected: String(t.CrmSync_Objections_Detected__c),
        handled: String(t.CrmSync_Objections_Handled__c),
      })),
    draftCopies: (draftId) => salesforceEmails(sf, [draftId]).length,
  };
}

/**
 * Every call written back with exactly one activity carrying the Service's scores, follow-ups
 * generated at most once, every draft the Service made attached exactly once. Adds figures
 * (`written`, `drafts`) and failures to `verdict`.
 */
export function checkWrittenOnceIn(
  verdict: Verdict,
  input: {
    svc: ServiceSandbox;
    crm: CrmReadback;
    callIds: string[];
    states: Map<string, SyncState | undefined>;
    /** Put before the figures' names, when one scenario checks several runs. */
    prefix?: string;
  },
): void {
  const { svc, crm, callIds, states, prefix = '' } = input;
  const notWritten = callIds.filter((id) => states.get(id) !== 'written_back');
  verdict.figure(`${prefix}written`, `${callIds.length - notWritten.length}/${callIds.length}`);
  verdict.check(
    notWritten.length === 0,
    `${crm.name}: ${notWritten.length} call(s) not written back: ${notWritten
      .slice(0, 5)
      .map((id) => `${id}=${states.get(id) ?? 'unknown'}`)
      .join(', ')}`,
  );
  const activityProblems: string[] = [];
  const generationProblems: string[] = [];
  const draftProblems: string[] = [];
  let drafts = 0;
  // At most once means a kill between claiming the generation and the Service's answer, or an
  // ambiguous failure of the request, leaves a call without drafts (README); reported, not failed.
  let withoutDrafts = 0;
  for (const id of callIds) {
    const activities = crm.activities(id);
    if (activities.length !== 1) activityProblems.push(`${id}: ${activities.length} activities`);
    else if (svc.state.getCall(id)?.analysis) {
      const { scoring, detected, handled } = expectedScores(svc, id);
      const a = activities[0]!;
      if (
        a.overall !== String(scoring.overall) ||
        a.detected !== String(detected) ||
        a.handled !== String(handled)
      )
        activityProblems.push(`${id}: activity carries other scores than the Service's`);
    }
    const generations = followupGenerations(svc, id);
    if (generations > 1) generationProblems.push(`${id}: ${generations} generations`);
    const ids = draftIds(svc, id);
    drafts += ids.length;
    if (ids.length === 0) withoutDrafts++;
    const copies = ids.map((d) => crm.draftCopies(d));
    if (copies.some((n) => n !== 1)) draftProblems.push(`${id}: records per draft ${copies.join('/')}`);
  }
  verdict.figure(`${prefix}drafts`, drafts);
  verdict.figure(`${prefix}calls without drafts`, withoutDrafts);
  const first = (list: string[]) => list.slice(0, 5).join('; ');
  verdict.check(
    activityProblems.length === 0,
    `${crm.name}: activities not exactly one and right: ${first(activityProblems)}`,
  );
  verdict.check(
    generationProblems.length === 0,
    `follow-ups generated more than once: ${first(generationProblems)}`,
  );
  verdict.check(
    draftProblems.length === 0,
    `${crm.name}: drafts not attached exactly once: ${first(draftProblems)}`,
  );
}
