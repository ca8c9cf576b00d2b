import type {
  ActivityWrite,
  CrmLookup,
  DealRule,
  DealWrite,
  FollowupWrite,
  LookupFields,
  Participant,
} from '../crm/types.js';
import { dealCallFacts } from '../deals/aggregate.js';
import type { Analysis, Call } from '../service/types.js';
import { buildContext, contextBytes } from './context.js';
import { buildDealWrite, dealTarget } from './deal.js';
import { dealRuleFor, lookupFieldsFor } from './lookupFields.js';
import type { CallInput, ContextBody, Mapping } from './types.js';
import { buildActivity, buildFollowups } from './writeback.js';

/**
 * What `crm-sync mappings preview` reads. Only reads: the lead wires it to the Service client
 * (getCall, getAnalysis) and the CRM adapter (lookup); nothing is pushed or written.
 */
export interface PreviewSource {
  getCall(callId: string): Promise<CallInput>;
  /** Throws while the analysis is not ready; the preview then shows the write-back without it. */
  getAnalysis(callId: string): Promise<object>;
  lookup(participant: Participant, fields: LookupFields, rule: DealRule): Promise<CrmLookup>;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; code?: string | undefined };

export interface Preview {
  callId: string;
  crm: Mapping['crm'];
  mappingFile: string;
  lookupFields: LookupFields;
  dealRule: DealRule;
  lookup: CrmLookup;
  /** Things the admin should know about this preview (no participant, analysis not ready, ...). */
  notes: string[];
  context: Outcome<{ body: ContextBody; bytes: number }>;
  activity: Outcome<ActivityWrite>;
  /** Built from a placeholder draft: generating real drafts is a write on the Service. */
  followups: Outcome<FollowupWrite[]>;
  /** The `deal` section's values from this call alone; null when the section is off or the call
   * is on no deal (a note says why). */
  deal: Outcome<DealWrite> | null;
}

const NO_MATCH: CrmLookup = { contact: null, company: null, deals: [], owner: null, matchedBy: 'none' };

export async function previewCall(
  source: PreviewSource,
  mapping: Mapping,
  callId: string,
  options: { now?: number } = {},
): Promise<Preview> {
  const notes: string[] = [];
  const lookupFields = lookupFieldsFor(mapping);
  const dealRule = dealRuleFor(mapping);
  const call = await source.getCall(callId);
  const participant = call.participant;
  let lookup = NO_MATCH;
  if (participant?.email) {
    lookup = await source.lookup(
      {
        email: participant.email,
        name: participant.name ?? undefined,
        company: participant.company ?? undefined,
      },
      lookupFields,
      dealRule,
    );
    if (lookup.matchedBy === 'none') notes.push(`no CRM record matches ${participant.email}`);
  } else {
    notes.push('the call has no participant email: no CRM lookup');
  }
  let analysis: object | null = null;
  try {
    analysis = await source.getAnalysis(callId);
  } catch (err) {
    notes.push(`analysis not available (${(err as Error).message}); write-back shown without it`);
  }
  const placeholder = {
    id: 'preview-draft',
    subject: '(subject of the generated draft)',
    body: '(body of the generated draft)',
    to: participant?.email ? [participant.email] : [],
    created_at: call.created_at,
  };
  notes.push('follow-ups are shown for a placeholder draft; real drafts are generated after the call');
  const input = { call, analysis, followups: [placeholder], lookup, now: options.now };
  return {
    callId,
    crm: mapping.crm,
    mappingFile: mapping.file,
    lookupFields,
    dealRule,
    lookup,
    notes,
    context: await attempt(async () => {
      const body = await buildContext(mapping, { call, lookup, now: options.now });
      return { body, bytes: contextBytes(body) };
    }),
    activity: await attempt(() => buildActivity(mapping, input)),
    followups: await attempt(() => buildFollowups(mapping, input)),
    deal: await previewDeal(mapping, input, notes),
  };
}

/** The deal write this call would make if it were its deal's only synced call. */
async function previewDeal(
  mapping: Mapping,
  input: { call: CallInput; analysis: object | null; lookup: CrmLookup; now?: number | undefined },
  notes: string[],
): Promise<Outcome<DealWrite> | null> {
  if (!dealTarget(mapping)) return null;
  // The deal the write-back records the call on (pipelines/writeback/act.ts).
  const dealId = input.lookup.deals[0]?.id;
  // The source hands over the Service's whole call; CallInput names only what the others read.
  const facts = dealCallFacts(input.call as Call, input.analysis as Analysis | null);
  if (!dealId) {
    notes.push('no open deal matched: no deal signals are written for this call');
  } else if (!facts) {
    notes.push("the call's created_at cannot be read: it is left out of its deal's signals");
  } else {
    notes.push("deal values are computed from this call alone; the worker adds up the deal's synced calls");
    return attempt(() => buildDealWrite(mapping, { dealId, calls: [facts], now: input.now }));
  }
  return null;
}

async function attempt<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { ok: false, error: (err as Error).message, code: typeof code === 'string' ? code : undefined };
  }
}

/** The preview as the terminal shows it: each section's JSON, or its error. */
export function formatPreview(p: Preview): string {
  const section = <T>(title: string, outcome: Outcome<T>, show: (v: T) => unknown): string =>
    outcome.ok
      ? `${title}\n${JSON.stringify(show(outcome.value), null, 2)}`
      : `${title}\n  ERROR ${outcome.code ?? ''} ${outcome.error}`.replace('ERROR  ', 'ERROR ');
  const who = p.lookup.contact ? `${p.lookup.contact.type} ${p.lookup.contact.id}` : 'no contact';
  return [
    `Preview of call ${p.callId} with ${p.mappingFile} (nothing is pushed or written)`,
    `Lookup: ${who}, ${p.lookup.deals.length} open deal(s), matched by ${p.lookup.matchedBy}`,
    ...p.notes.map((n) => `Note: ${n}`),
    '',
    section('== Context pushed to the Service (POST /v1/calls/:id/context)', p.context, (v) => v.body),
    p.context.ok ? `(${p.context.value.bytes} bytes)` : '',
    section(`== Activity written to ${p.crm}`, p.activity, (v) => v),
    '',
    section(`== Follow-ups written to ${p.crm} (placeholder draft)`, p.followups, (v) => v),
    ...(p.deal
      ? ['', section(`== Deal signals written to ${p.crm} (this call alone)`, p.deal, (v) => v)]
      : []),
  ].join('\n');
}
