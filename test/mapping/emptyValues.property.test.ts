/**
 * The shipped mappings over CRM data as real orgs hold it: any field of any record may be null
 * (Salesforce's empty), "" (HubSpot's unset) or missing, records may be absent, and the Service's
 * call, analysis and drafts may lack any optional value. No optional target may fail: evaluation
 * leaves no warning, and the only error allowed is a required target that is empty, naming it.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CrmLookup, CrmName, CrmRecord } from '../../src/crm/types.js';
import {
  buildActivity,
  buildContext,
  buildFollowups,
  loadMappings,
  MappingRequiredMissingError,
} from '../../src/mapping/index.js';
import { analysis, call, CONFIG_DIR, drafts, lookupFor, removeConfigDirs } from './helpers.js';

afterAll(removeConfigDirs);

type Blank = 'keep' | 'null' | 'empty' | 'missing';
const blank = fc.constantFrom<Blank>('keep', 'keep', 'null', 'empty', 'missing');

/** Applies one random blanking to each key of an object (deep for nested objects). */
function blanked(value: Record<string, unknown>, choices: Blank[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = 0;
  for (const [k, v] of Object.entries(value)) {
    const c = choices[i++ % choices.length] ?? 'keep';
    if (c === 'missing') continue;
    if (c === 'null') out[k] = null;
    else if (c === 'empty') out[k] = '';
    else if (v && typeof v === 'object' && !Array.isArray(v))
      out[k] = blanked(v as Record<string, unknown>, choices.slice(i));
    else out[k] = v;
  }
  return out;
}

const record = (r: CrmRecord | null, choices: Blank[], present: boolean): CrmRecord | null =>
  r && present ? { ...r, properties: blanked(r.properties, choices) } : null;

const choicesArb = fc.array(blank, { minLength: 1, maxLength: 40 });

function arbitraryInput(crm: CrmName) {
  return fc
    .record({
      contact: fc.tuple(choicesArb, fc.boolean()),
      company: fc.tuple(choicesArb, fc.boolean()),
      deal: fc.tuple(choicesArb, fc.boolean()),
      owner: fc.tuple(choicesArb, fc.boolean()),
      call: choicesArb,
      analysis: fc.tuple(choicesArb, fc.boolean()),
      followup: choicesArb,
      lead: fc.boolean(),
    })
    .map((c) => {
      const base = lookupFor(crm);
      const contact = record(base.contact, ...c.contact);
      const lookup: CrmLookup = {
        contact: contact && crm === 'salesforce' && c.lead ? { ...contact, type: 'lead' } : contact,
        company: record(base.company, ...c.company),
        deals: base.deals.flatMap((d) => record(d, ...c.deal) ?? []),
        owner: record(base.owner, ...c.owner),
        matchedBy: base.matchedBy,
      };
      const theCall = { ...blanked(call(), c.call), id: 'call_prop' };
      const theAnalysis = c.analysis[1] ? blanked(analysis(), c.analysis[0]) : null;
      const theDrafts = drafts().map((d) => ({ ...blanked(d, c.followup), id: d.id }));
      return { lookup, call: theCall, analysis: theAnalysis, drafts: theDrafts };
    });
}

describe.each(['hubspot', 'salesforce'] as const)(
  'shipped %s mapping over records with empty fields',
  (crm) => {
    const mapping = loadMappings(CONFIG_DIR, crm);

    it('builds the context and the write-back without an evaluation error on any optional field', async () => {
      await fc.assert(
        fc.asyncProperty(arbitraryInput(crm), async (input) => {
          const warnings: string[] = [];
          const now = Date.UTC(2026, 10, 25);
          await buildContext(mapping, { call: input.call, lookup: input.lookup, now, warnings });
          const writeInput = {
            call: input.call,
            analysis: input.analysis,
            followups: input.drafts,
            lookup: input.lookup,
            now,
            warnings,
          };
          for (const build of [buildActivity, buildFollowups] as const) {
            try {
              await build(mapping, writeInput);
            } catch (err) {
              // Only an empty required target may stop a write, and it is named.
              expect(err).toBeInstanceOf(MappingRequiredMissingError);
              expect((err as MappingRequiredMissingError).fields.length).toBeGreaterThan(0);
            }
          }
          expect(warnings).toEqual([]);
        }),
        { numRuns: 300, seed: 20261125 },
      );
    });

    it('pushes what is there for a contact without a first name at an account without a website', async () => {
      const base = lookupFor(crm);
      const [first, website] = crm === 'hubspot' ? ['firstname', 'domain'] : ['FirstName', 'Website'];
      const empty = crm === 'hubspot' ? '' : null;
      const lookup: CrmLookup = {
        ...base,
        contact: { ...base.contact!, properties: { ...base.contact!.properties, [first]: empty } },
        company: { ...base.company!, properties: { ...base.company!.properties, [website]: null } },
      };
      const warnings: string[] = [];
      const body = await buildContext(mapping, { call: call(), lookup, warnings });
      expect(body.contact.name).toBe('Whitfield');
      expect(body.company).not.toHaveProperty('domain');
      expect(body.company.name).toBeTruthy();
      expect(warnings).toEqual([]);
    });
  },
);
