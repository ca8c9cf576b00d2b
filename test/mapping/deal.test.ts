/**
 * The mapping files' `deal` section: the shipped defaults over a deal's calls, turning it off,
 * and the errors a broken section gets (file, line, column, field, and what was expected).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { DealCallFacts } from '../../src/deals/aggregate.js';
import { buildDealWrite, dealTarget } from '../../src/mapping/deal.js';
import { MappingError, type MappingProblem } from '../../src/mapping/errors.js';
import { loadMappings } from '../../src/mapping/load.js';
import { requiredFields } from '../../src/mapping/requirements.js';
import { CONFIG_DIR, configWith, removeConfigDirs } from './helpers.js';

afterAll(removeConfigDirs);

const calls: DealCallFacts[] = [
  {
    callId: 'call_new',
    startedAt: Date.parse('2025-03-03T16:30:00Z'),
    overallScore: 88,
    objectionsDetected: 2,
    objectionsHandled: 1,
    nextSteps: ['Send the security review', 'Book the pilot'],
  },
  {
    callId: 'call_old',
    startedAt: Date.parse('2025-03-01T09:00:00Z'),
    overallScore: 61,
    objectionsDetected: 3,
    objectionsHandled: 1,
    nextSteps: ['Share pricing'],
  },
  {
    callId: 'call_mid',
    startedAt: Date.parse('2025-03-02T09:00:00Z'),
    overallScore: 70,
    objectionsDetected: 0,
    objectionsHandled: 0,
    nextSteps: [],
  },
];

describe('shipped deal sections', () => {
  it('HubSpot: the newest call’s date, score and next step, the average of the last 3, open objections', async () => {
    const mapping = loadMappings(CONFIG_DIR, 'hubspot');
    expect(dealTarget(mapping)).toMatchObject({ enabled: true, object: 'deals', averageOf: 3 });
    const write = await buildDealWrite(mapping, { dealId: '3001', calls });
    expect(write).toEqual({
      dealId: '3001',
      properties: {
        crmsync_last_call_date: '2025-03-03',
        crmsync_last_call_score: 88,
        crmsync_average_score: 73,
        crmsync_open_objections: 3,
        crmsync_last_next_step: 'Send the security review; Book the pilot',
      },
    });
  });

  it('Salesforce: the same signals on the Opportunity', async () => {
    const mapping = loadMappings(CONFIG_DIR, 'salesforce');
    expect(dealTarget(mapping)).toMatchObject({ enabled: true, object: 'Opportunity', averageOf: 3 });
    const write = await buildDealWrite(mapping, { dealId: '006000000000001AAA', calls: calls.slice(0, 2) });
    expect(write.properties).toEqual({
      CrmSync_Last_Call_Date__c: '2025-03-03',
      CrmSync_Last_Call_Score__c: 88,
      CrmSync_Average_Score__c: 74.5,
      CrmSync_Open_Objections__c: 3,
      CrmSync_Last_Next_Step__c: 'Send the security review; Book the pilot',
    });
  });

  it('clears a field the newest call leaves empty, instead of keeping an older call’s value', async () => {
    const mapping = loadMappings(CONFIG_DIR, 'hubspot');
    const unscored: DealCallFacts = {
      callId: 'call_newest',
      startedAt: Date.parse('2025-03-04T09:00:00Z'),
      overallScore: null,
      objectionsDetected: null,
      objectionsHandled: null,
      nextSteps: [],
    };
    const write = await buildDealWrite(mapping, { dealId: '3001', calls: [...calls, unscored] });
    expect(write.properties.crmsync_last_call_score).toBeNull();
    expect(write.properties.crmsync_last_call_date).toBe('2025-03-04');
    // The next step still comes from the newest call that named one.
    expect(write.properties.crmsync_last_next_step).toBe('Send the security review; Book the pilot');
  });
});

const HEAD = [
  'version: 1',
  'crm: hubspot',
  'context: {}',
  'writeback:',
  '  activity:',
  '    object: calls',
  '    id_field: crmsync_call_id',
  '    fields:',
  '      hs_timestamp: { source: call.created_at }',
]; // lines 1-9

function load(lines: string[]) {
  const { dir } = configWith('hubspot', lines.join('\n') + '\n');
  return { dir, mapping: () => loadMappings(dir, 'hubspot') };
}

function problemsOf(lines: string[]): MappingProblem[] {
  const { dir, mapping } = load(lines);
  try {
    mapping();
  } catch (err) {
    expect(err).toBeInstanceOf(MappingError);
    return (err as MappingError).problems.map((p) => ({ ...p, file: p.file.replace(dir, '<dir>') }));
  }
  throw new Error('expected the mapping to be rejected');
}

describe('turning the deal section off', () => {
  it('enabled: false keeps the section but writes nothing and asks doctor for none of its fields', () => {
    const mapping = load([
      ...HEAD,
      'deal:',
      '  enabled: false',
      '  fields:',
      '    crmsync_last_call_score: { source: signals.last_score, type: number }',
    ]).mapping();
    expect(mapping.deal?.enabled).toBe(false);
    expect(dealTarget(mapping)).toBeNull();
    expect(requiredFields(mapping).map((r) => r.object)).not.toContain('deals');
  });

  it('a file without a deal section has none', () => {
    expect(dealTarget(load(HEAD).mapping())).toBeNull();
  });
});

describe('a broken deal section gets a clear error', () => {
  it('a name the deal section does not have, pointed at the character', () => {
    const problems = problemsOf([
      ...HEAD,
      'deal:', //                                                                  line 10
      '  fields:',
      '    crmsync_last_call_score: { source: analysis.scoring.overall }', //     line 12
    ]);
    expect(problems).toEqual([
      {
        file: '<dir>/mappings/hubspot.yaml',
        line: 12,
        col: 40,
        path: 'deal.fields.crmsync_last_call_score.source',
        message: 'unknown name "analysis" (the input has signals, calls, deal)',
      },
    ]);
  });

  it('average_of out of range, and a key the section does not know', () => {
    const problems = problemsOf([
      ...HEAD,
      'deal:', //                                      line 10
      '  average_of: 0', //                            line 11
      '  object: deals', //                            line 12
      '  fields:',
      '    crmsync_open_objections: { source: signals.open_objections }',
    ]);
    expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [11, 'deal.average_of', 'expected 1 to 50 calls'],
      [12, 'deal.object', expect.stringMatching(/object/)],
    ]);
  });

  it('a section that is on but names no field', () => {
    const problems = problemsOf([...HEAD, 'deal:', '  enabled: true', '  fields: {}']);
    expect(problems).toEqual([
      expect.objectContaining({
        line: 12,
        path: 'deal.fields',
        message: 'name at least one field to write on the deal, or set enabled: false',
      }),
    ]);
  });

  it('enabled that is not true or false', () => {
    const problems = problemsOf([
      ...HEAD,
      'deal:',
      '  enabled: yes please', //  line 11
      '  fields:',
      '    crmsync_open_objections: { source: signals.open_objections }',
    ]);
    expect(problems).toEqual([
      expect.objectContaining({ line: 11, path: 'deal.enabled', message: 'expected true or false' }),
    ]);
  });
});
