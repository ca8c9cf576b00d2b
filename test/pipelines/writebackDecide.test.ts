/**
 * The write-back's decision (src/pipelines/writeback/decide.ts), case by case, without a database
 * or any request: each row is what was gathered of one call and what must happen to it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CrmLookup, WrittenCall } from '../../src/crm/types.js';
import { loadMappings } from '../../src/mapping/index.js';
import {
  ANALYSIS_NOT_READY,
  decideWriteback,
  type Decision,
  type WritebackFacts,
} from '../../src/pipelines/writeback/decide.js';
import type { Analysis, Call } from '../../src/service/types.js';
import { noMatchReason } from '../../src/sync/skipReasons.js';

const withFollowups = loadMappings(path.join(import.meta.dirname, '..', '..', 'config'), 'hubspot');
const noFollowups = { ...withFollowups, writeback: { ...withFollowups.writeback, followups: null } };

const NOW = Date.parse('2026-11-28T12:00:00Z');
const hoursAgo = (h: number) => new Date(NOW - h * 3_600_000);

const call = (over: Partial<Call> = {}): Call => ({
  id: 'call_1',
  status: 'analyzed',
  created_at: hoursAgo(1).toISOString(),
  participant: { name: 'Ada', email: 'ada@example.com', company: 'Example' },
  ...over,
});
const record = (
  over: Partial<{ state: 'discovered'; createdAt: Date; followupsRequestedAt: Date | null }> = {},
) => ({
  state: 'discovered' as const,
  createdAt: hoursAgo(1),
  followupsRequestedAt: null,
  ...over,
});
const analysis = { call_id: 'call_1' } as unknown as Analysis;
const matched: CrmLookup = {
  contact: { id: 'c1', properties: {} },
  company: null,
  deals: [],
  owner: null,
  matchedBy: 'email',
} as unknown as CrmLookup;
const noMatch: CrmLookup = { contact: null, company: null, deals: [], owner: null, matchedBy: 'none' };
const written: WrittenCall = { activityId: 'a1', followups: [{ draftId: 'd1', crmId: 'n1' }] };
const draft = (crmId: string | null) => ({ crmId, raw: { id: 'd1', subject: 's', body: 'b' } });

/** Everything gathered for an analysed, matched call with nothing stored. */
const full = (over: Partial<WritebackFacts> = {}): WritebackFacts => ({
  replay: false,
  status: null,
  drafts: [],
  call: call(),
  record: record(),
  analysis,
  lookup: matched,
  ...over,
});

const cases: {
  name: string;
  facts: WritebackFacts;
  mapping?: typeof withFollowups;
  expected: Partial<Decision> & Pick<Decision, 'kind'>;
}[] = [
  // What to gather next, in the order the requests are paid for.
  {
    name: 'nothing read yet: the call',
    facts: { replay: false, status: null, drafts: [] },
    expected: { kind: 'need', what: 'call' },
  },
  {
    name: 'analysed call: its analysis',
    facts: full({ analysis: undefined, lookup: undefined }),
    expected: { kind: 'need', what: 'analysis' },
  },
  {
    name: 'analysis read: the lookup',
    facts: full({ lookup: undefined }),
    expected: { kind: 'need', what: 'lookup' },
  },

  // analysed -> write (follow-ups asked for after the stamp: none stored)
  {
    name: 'analysed and matched: write, asking for follow-ups',
    facts: full(),
    expected: {
      kind: 'write',
      to: 'written_back',
      followupsOnly: false,
      drafts: [],
      generate: { email: 'ada@example.com', claimed: false },
    },
  },
  {
    name: 'analysed, drafts stored: write them, ask for none',
    facts: full({ drafts: [draft(null)] }),
    expected: { kind: 'write', followupsOnly: false, drafts: [draft(null).raw], generate: undefined },
  },
  {
    name: 'analysed, claim already held: write, the claim noted',
    facts: full({ record: record({ followupsRequestedAt: hoursAgo(0.5) }) }),
    expected: { kind: 'write', generate: { email: 'ada@example.com', claimed: true } },
  },
  {
    name: 'mapping writes no follow-ups: write, ask for none',
    facts: full(),
    mapping: noFollowups,
    expected: { kind: 'write', followupsOnly: false, generate: undefined },
  },

  // not analysed -> wait (or give up)
  {
    name: 'completed, not analysed: wait at the safety-check floor',
    facts: full({
      call: call({ status: 'completed', created_at: hoursAgo(1 / 6).toISOString() }),
      analysis: undefined,
    }),
    expected: { kind: 'wait', to: 'awaiting_analysis', reason: 'call is completed', delayMs: 5 * 60_000 },
  },
  {
    name: "analysis not ready: wait a tenth of the call's age",
    facts: full({ analysis: ANALYSIS_NOT_READY, lookup: undefined }),
    expected: { kind: 'wait', to: 'awaiting_analysis', reason: 'analysis not ready', delayMs: 6 * 60_000 },
  },
  {
    name: 'unknown status past 48 h: failed, SERVICE_NOT_READY',
    facts: full({
      call: call({ status: 'mystery', created_at: hoursAgo(50).toISOString() }),
      record: record({ createdAt: hoursAgo(49) }),
    }),
    expected: { kind: 'end', to: 'failed', code: 'SERVICE_NOT_READY' },
  },

  // ended -> skip
  {
    name: 'failed at the Service: skipped',
    facts: full({ call: call({ status: 'failed' }), analysis: undefined }),
    expected: { kind: 'end', to: 'skipped', code: 'SKIPPED', reason: 'the call failed at the Service' },
  },
  {
    name: 'cancelled: skipped',
    facts: full({ call: call({ status: 'cancelled' }), analysis: undefined }),
    expected: {
      kind: 'end',
      to: 'skipped',
      reason: 'the call was cancelled at the Service (status "cancelled")',
    },
  },
  {
    name: 'no participant email: skipped, no lookup',
    facts: full({ call: call({ participant: null }), lookup: undefined }),
    expected: { kind: 'end', to: 'skipped', reason: 'the call has no participant email' },
  },

  // contact merged away (no match now) -> skipped, from writing_back too
  {
    name: 'contact merged away: nobody to write to, skipped',
    facts: full({ status: { state: 'writing_back' }, lookup: noMatch }),
    expected: { kind: 'end', to: 'skipped', code: 'SKIPPED', reason: noMatchReason('ada@example.com') },
  },
  {
    name: 'lookup found a match rule but no record: skipped',
    facts: full({ lookup: { ...noMatch, matchedBy: 'domain' } }),
    expected: { kind: 'end', to: 'skipped' },
  },

  // already written (the CRM ledger) -> adopt, before anything else is read
  {
    name: 'CRM holds activity and drafts: adopt (re-linked in act)',
    facts: full({ ledger: written, analysis: undefined, lookup: undefined }),
    expected: { kind: 'adopt', to: 'written_back', written },
  },
  {
    name: 'CRM holds the stamp only: adopt',
    facts: full({
      ledger: { activityId: 'a1', followupsGeneratedAt: '2026-11-28T11:00:00Z', followups: [] },
      analysis: undefined,
    }),
    expected: { kind: 'adopt' },
  },
  {
    name: 'CRM holds the stamp of an ended call: adopt, not skip',
    facts: full({ ledger: written, call: call({ status: 'failed' }) }),
    expected: { kind: 'adopt' },
  },
  {
    name: 'CRM holds the activity only: write (follow-ups still owed)',
    facts: full({ ledger: { activityId: 'a1', followups: [] } }),
    expected: { kind: 'write', followupsOnly: false },
  },
  {
    name: 'CRM holds the activity only, mapping without follow-ups: adopt',
    facts: full({ ledger: { activityId: 'a1', followups: [] } }),
    mapping: noFollowups,
    expected: { kind: 'adopt' },
  },
  {
    name: 'the ledger could not be asked: error, nothing written',
    facts: full({ ledger: new Error('CRM down') }),
    expected: { kind: 'error' },
  },
  {
    name: 'the database refused the call facts: error',
    facts: full({ record: new Error('refused') }),
    expected: { kind: 'error' },
  },

  // written back, drafts pending -> drafts-only write
  {
    name: 'written back, a draft pending: drafts-only write',
    facts: full({ status: { state: 'written_back' }, drafts: [draft(null)] }),
    expected: { kind: 'write', followupsOnly: true, generate: undefined },
  },
  {
    name: 'written back, drafts pending, mapping without follow-ups: done',
    facts: full({ status: { state: 'written_back' }, drafts: [draft(null)] }),
    mapping: noFollowups,
    expected: { kind: 'done', reason: 'already written back' },
  },
  {
    name: 'written back, every draft written: done, nothing read',
    facts: { replay: false, status: { state: 'written_back' }, drafts: [draft('n1')] },
    expected: { kind: 'done', reason: 'already written back' },
  },
  {
    name: 'written back, replayed: a full write',
    facts: full({ replay: true, status: { state: 'written_back' }, drafts: [draft('n1')] }),
    expected: { kind: 'write', followupsOnly: false },
  },

  // ends the worker leaves to an operator
  {
    name: 'skipped before: done until replayed',
    facts: { replay: false, status: { state: 'skipped' }, drafts: [] },
    expected: { kind: 'done', reason: 'call is skipped; replay to retry' },
  },
  {
    name: 'failed before, replayed: the call is read again',
    facts: { replay: true, status: { state: 'failed' }, drafts: [] },
    expected: { kind: 'need', what: 'call' },
  },
];

describe('the write-back decision', () => {
  it.each(cases)('$name', ({ facts, mapping, expected }) => {
    const decision = decideWriteback(facts, { mapping: mapping ?? withFollowups, now: NOW });
    expect(decision).toMatchObject(expected);
  });

  it('is the same decision for the same facts (no clock or state of its own)', () => {
    const facts = full({ call: call({ status: 'processing' }), analysis: undefined });
    const ctx = { mapping: withFollowups, now: NOW };
    expect(decideWriteback(facts, ctx)).toEqual(decideWriteback(facts, ctx));
  });
});
