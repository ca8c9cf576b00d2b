/**
 * What `npm run demo` prints about each call, from what the CRM sandboxes hold: which records the
 * call's activity landed on, by name, and the context pushed to the live call. Pure: demo.ts
 * fetches the sandboxes' records and hands them here.
 */

type Props = Record<string, unknown>;

/** A record the call's activity is linked to, as the summary names it. */
export interface LandedOn {
  name: string;
  kind: string;
}

export interface CallLanding {
  callId: string;
  /** "engagement 1029", "Task 00T…"; null when nothing was written for the call. */
  activity: string | null;
  on: LandedOn[];
  followups: number;
}

/**
 * "call c_123: engagement 1029 on Walt Grant (contact), Wayne Enterprises (company); 2 follow-up
 * drafts". `why`: the call's state and reason, said when nothing was written.
 */
export function landingLine(l: CallLanding, why?: string): string {
  if (l.activity === null) return `call ${l.callId}: nothing written to the CRM${why ? ` (${why})` : ''}`;
  const on =
    l.on.length > 0 ? ` on ${l.on.map((r) => `${r.name} (${r.kind})`).join(', ')}` : ' (linked to no record)';
  const drafts = `${l.followups} follow-up draft${l.followups === 1 ? '' : 's'}`;
  return `call ${l.callId}: ${l.activity}${on}; ${drafts}`;
}

const text = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  const s = String(v).trim();
  return s === '' ? null : s;
};

/** A person's name from first and last name fields, else `fallback`. */
function personName(first: unknown, last: unknown, fallback: string): string {
  return [text(first), text(last)].filter(Boolean).join(' ') || fallback;
}

export interface HubSpotObject {
  id: string;
  properties: Props;
}

export interface HubSpotAssociation {
  fromType: string;
  fromId: string;
  toType: string;
  toId: string;
}

export interface HubSpotRecords {
  calls: HubSpotObject[];
  notes: HubSpotObject[];
  contacts: HubSpotObject[];
  companies: HubSpotObject[];
  deals: HubSpotObject[];
  associations: HubSpotAssociation[];
}

/** Each call's engagement (found by `crmsync_call_id`) and the contact, company and deal it is associated with. */
export function hubspotLandings(callIds: string[], r: HubSpotRecords): CallLanding[] {
  const byId = (list: HubSpotObject[]) => new Map(list.map((o) => [o.id, o.properties]));
  const named: Record<
    string,
    { kind: string; props: Map<string, Props>; name: (p: Props, id: string) => string }
  > = {
    contacts: {
      kind: 'contact',
      props: byId(r.contacts),
      name: (p, id) => personName(p.firstname, p.lastname, text(p.email) ?? `contact ${id}`),
    },
    companies: {
      kind: 'company',
      props: byId(r.companies),
      name: (p, id) => text(p.name) ?? `company ${id}`,
    },
    deals: { kind: 'deal', props: byId(r.deals), name: (p, id) => text(p.dealname) ?? `deal ${id}` },
  };
  return callIds.map((callId) => {
    const call = r.calls.find((c) => c.properties.crmsync_call_id === callId);
    const followups = r.notes.filter(
      (n) => n.properties.crmsync_call_id === callId && text(n.properties.crmsync_followup_id),
    ).length;
    if (!call) return { callId, activity: null, on: [], followups };
    const on: LandedOn[] = [];
    for (const [type, t] of Object.entries(named)) {
      // One record may be associated twice (e.g. primary and unlabelled): named once.
      const ids = r.associations
        .filter((x) => x.fromType === 'calls' && x.fromId === call.id && x.toType === type)
        .map((x) => x.toId);
      for (const id of new Set(ids)) on.push({ kind: t.kind, name: t.name(t.props.get(id) ?? {}, id) });
    }
    return { callId, activity: `engagement ${call.id}`, on, followups };
  });
}

export interface SalesforceRecords {
  Task: Props[];
  EmailMessage: Props[];
  Contact: Props[];
  Lead: Props[];
  Account: Props[];
  Opportunity: Props[];
}

/**
 * Each call's Task (found by `CrmSync_Call_Id__c`), its Who (Contact or Lead) and What (Opportunity
 * or Account); for an Opportunity, its Account too, which Salesforce shows the Task under.
 */
export function salesforceLandings(callIds: string[], r: SalesforceRecords): CallLanding[] {
  const find = (list: Props[], id: unknown) => (id ? list.find((x) => x.Id === id) : undefined);
  const accountName = (a: Props) => text(a.Name) ?? `Account ${String(a.Id)}`;
  return callIds.map((callId) => {
    const task = r.Task.find((t) => t.CrmSync_Call_Id__c === callId);
    const followups = r.EmailMessage.filter(
      (m) => m.CrmSync_Call_Id__c === callId && text(m.CrmSync_Followup_Id__c),
    ).length;
    if (!task) return { callId, activity: null, on: [], followups };
    const on: LandedOn[] = [];
    const contact = find(r.Contact, task.WhoId);
    const lead = contact ? undefined : find(r.Lead, task.WhoId);
    const who = contact ?? lead;
    if (who) {
      on.push({
        kind: contact ? 'Contact' : 'Lead',
        name: text(who.Name) ?? personName(who.FirstName, who.LastName, String(who.Id)),
      });
    }
    const opportunity = find(r.Opportunity, task.WhatId);
    const account = find(r.Account, opportunity ? opportunity.AccountId : task.WhatId);
    if (account) on.push({ kind: 'Account', name: accountName(account) });
    if (opportunity) on.push({ kind: 'Opportunity', name: text(opportunity.Name) ?? String(opportunity.Id) });
    return { callId, activity: `Task ${String(task.Id)}`, on, followups };
  });
}

/** Longest value shown in the context summary; longer ones end in an ellipsis. */
const VALUE_MAX = 70;

function shown(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > VALUE_MAX ? `${flat.slice(0, VALUE_MAX - 1)}…` : flat;
}

/** Width the demo's summary wraps at (the CLI's readable width). */
const WIDTH = 100;
const LABEL = 11;

/**
 * `line` wrapped at WIDTH after its ", " and "; " separators (never inside a name or value),
 * continuation lines indented by `indent`.
 */
export function wrap(line: string, indent: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const piece of line.split(/(?<=[,;] )/)) {
    if (current.trim() !== '' && (current + piece).trimEnd().length > WIDTH) {
      out.push(current.trimEnd());
      current = ' '.repeat(indent) + piece;
    } else current += piece;
  }
  return [...out, current.trimEnd()];
}

/** `label` then the part's set fields, wrapped under the first field. */
function part(label: string, values: Props): string[] {
  const set = Object.entries(values).filter(([, v]) => v !== null && v !== undefined && v !== '');
  const items = set.length === 0 ? ['(nothing)'] : set.map(([k, v]) => `${k}: ${shown(v)}`);
  return wrap(`  ${label}`.padEnd(LABEL) + items.join(', '), LABEL);
}

/** The context body pushed to a live call: each part (contact, company, each deal, custom) in full, wrapped. */
export function contextLines(body: {
  contact?: Props;
  company?: Props;
  deals?: Props[];
  custom?: Props;
}): string[] {
  const deals = body.deals ?? [];
  return [
    ...part('contact', body.contact ?? {}),
    ...part('company', body.company ?? {}),
    ...(deals.length === 0
      ? ['  deals    (no open deal)']
      : deals.flatMap((d, i) => part(`deal ${i + 1}`, d))),
    ...(Object.keys(body.custom ?? {}).length > 0 ? part('custom', body.custom ?? {}) : []),
  ];
}

/** ANSI styling only on a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(isTTY: boolean | undefined, env: Record<string, string | undefined>): boolean {
  return isTTY === true && !env.NO_COLOR;
}
