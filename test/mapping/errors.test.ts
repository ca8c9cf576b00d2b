import { afterAll, describe, expect, it } from 'vitest';
import {
  formatProblem,
  MappingError,
  MappingEvaluationError,
  MappingRequiredMissingError,
  type MappingProblem,
} from '../../src/mapping/errors.js';
import { loadMappings } from '../../src/mapping/load.js';
import { buildContext } from '../../src/mapping/context.js';
import { buildActivity } from '../../src/mapping/writeback.js';
import { analysis, call, configWith, lookupFor, removeConfigDirs } from './helpers.js';

afterAll(removeConfigDirs);

/** Writes `lines` as config/mappings/<crm>.yaml and returns the problems loading it reports. */
function problemsOf(lines: string[], crm: 'hubspot' | 'salesforce' = 'hubspot'): MappingProblem[] {
  const { dir } = configWith(crm, lines.join('\n') + '\n');
  try {
    loadMappings(dir, crm);
  } catch (err) {
    expect(err).toBeInstanceOf(MappingError);
    expect((err as MappingError).code).toBe('MAPPING_INVALID');
    return (err as MappingError).problems.map((p) => ({ ...p, file: p.file.replace(dir, '<dir>') }));
  }
  throw new Error('expected the mapping to be rejected');
}

const HEAD = ['version: 1', 'crm: hubspot', 'context:', '  contact:', '    email: { source: contact.email }'];
const ACTIVITY = [
  'writeback:',
  '  activity:',
  '    object: calls',
  '    id_field: crmsync_call_id',
  '    fields:',
];

describe('broken mapping files name file, line, column and field', () => {
  it('bad YAML', () => {
    const problems = problemsOf([
      ...HEAD, //                                          lines 1-5
      '    title: { source: contact.jobtitle', //          line 6: flow map never closed
      ...ACTIVITY,
      '      hs_timestamp: { source: call.created_at }',
    ]);
    // The parser notices the missing `}` where the next block key starts.
    expect(problems[0]).toEqual({
      file: '<dir>/mappings/hubspot.yaml',
      line: 7,
      col: 1,
      path: '',
      message:
        'YAML syntax error: Flow map in block collection must be sufficiently indented and end with a }',
    });
  });

  it('unknown transform', () => {
    const problems = problemsOf([
      ...HEAD,
      ...ACTIVITY, //                                                          lines 6-10
      '      hs_call_title:', //                                               line 11
      '        source: call.participant.name',
      '        transform: [{ format: upper }, { shout: true }]', //            line 13
    ]);
    expect(problems).toEqual([
      {
        file: '<dir>/mappings/hubspot.yaml',
        line: 13,
        col: 42,
        path: 'writeback.activity.fields.hs_call_title.transform[1].shout',
        message:
          'unknown transform "shout" (expected one of format | round | join | default | truncate | map)',
      },
    ]);
  });

  it('bad JSONata, pointed at the character', () => {
    const problems = problemsOf([
      ...HEAD,
      ...ACTIVITY,
      '      hs_timestamp: { source: call.created_at }', //             line 11
      '      hs_call_title: { source: "\'Call with \' & & call.id" }', // line 12; second & at col 48
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      line: 12,
      col: 48,
      path: 'writeback.activity.fields.hs_call_title.source',
    });
    expect(formatProblem(problems[0] as MappingProblem)).toMatch(
      /^<dir>\/mappings\/hubspot\.yaml:12:48: writeback\.activity\.fields\.hs_call_title\.source: JSONata syntax error: /,
    );
  });

  it('bad JSONata inside a literal block, on the right line', () => {
    const problems = problemsOf([
      ...HEAD,
      ...ACTIVITY,
      '      hs_call_body:', //                    line 11
      '        source: |', //                      line 12
      '          $join([', //                      line 13
      '            analysis.summary,', //          line 14
      '            analysis.next_steps)', //       line 15: ')' where ']' belongs
      "          ], '\\n')",
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      line: 15,
      col: 32,
      path: 'writeback.activity.fields.hs_call_body.source',
    });
  });

  it('missing required key', () => {
    const problems = problemsOf([
      ...HEAD,
      'writeback:',
      '  activity:', //                          line 7
      '    object: calls',
      '    fields:',
      '      hs_call_title: { transform: [] }', // line 10: no source
    ]);
    expect(problems).toEqual([
      {
        file: '<dir>/mappings/hubspot.yaml',
        line: 7,
        col: 3,
        path: 'writeback.activity.id_field',
        message: 'missing required key "id_field"',
      },
      {
        file: '<dir>/mappings/hubspot.yaml',
        line: 10,
        col: 7,
        path: 'writeback.activity.fields.hs_call_title.source',
        message: 'missing required key "source"',
      },
    ]);
  });

  it('wrong types', () => {
    const problems = problemsOf([
      'version: 2', //                                                              line 1
      'crm: hubspot',
      'context:',
      '  deal_rule: { order_by: newest, limit: 3 }', //                             line 4
      ...ACTIVITY, //                                                               lines 5-9
      '      hs_timestamp: { source: call.created_at, required: "yes" }', //        line 10
      '      crmsync_score_overall: { source: analysis.scoring.overall, transform: [{ round: two }] }',
    ]);
    expect(problems.map((p) => `${p.line}:${p.col} ${p.path}: ${p.message}`)).toEqual([
      '1:10 version: expected version: 1',
      '4:26 context.deal_rule.order_by: expected one of close_date_asc | close_date_desc | amount_desc | last_modified_desc',
      '10:58 writeback.activity.fields.hs_timestamp.required: expected true or false',
      '11:87 writeback.activity.fields.crmsync_score_overall.transform[0].round: expected a whole number of digits',
    ]);
  });

  it('unknown names in an expression and unknown keys', () => {
    const problems = problemsOf([
      ...HEAD,
      '    phone: { source: contcat.phone, requird: true }', //       line 6
      ...ACTIVITY,
      '      hs_note_body: { source: followup.body }', //              line 12: no `followup` for the activity
    ]);
    expect(problems.map((p) => `${p.line}:${p.col} ${p.path}: ${p.message}`)).toEqual([
      '6:22 context.contact.phone.source: unknown name "contcat" (the input has call, contact, lead, company, deal, owner, lookup, crm)',
      '6:37 context.contact.phone.requird: unknown key "requird"',
      '12:31 writeback.activity.fields.hs_note_body.source: unknown name "followup" (the input has call, contact, lead, company, deal, owner, lookup, crm, analysis, followups)',
    ]);
  });

  it('a follow-up kind the CRM does not have, and a file for another CRM', () => {
    expect(
      problemsOf(
        [
          ...HEAD,
          ...ACTIVITY,
          '      hs_timestamp: { source: call.created_at }',
          '  followups:',
          '    kind: email', //   line 13
          '    id_field: crmsync_followup_id',
          '    fields: {}',
        ],
        'hubspot',
      ).map((p) => `${p.line}:${p.col} ${p.path}: ${p.message}`),
    ).toEqual(['13:11 writeback.followups.kind: expected note | task for hubspot']);
    expect(
      problemsOf([...HEAD, ...ACTIVITY, '      Subject: { source: call.id }'], 'salesforce').map(
        (p) => `${p.line}:${p.col} ${p.path}: ${p.message}`,
      ),
    ).toEqual(['2:6 crm: this file is for hubspot, expected salesforce']);
  });

  it('a missing file', () => {
    const { dir } = configWith('hubspot', '');
    expect(() => loadMappings(dir, 'salesforce')).toThrow(/salesforce\.yaml: file not found/);
  });
});

describe('errors for one call', () => {
  const lines = [...HEAD, ...ACTIVITY];

  it('a required field that comes out empty fails the call with MAPPING_REQUIRED_MISSING', async () => {
    const { dir } = configWith(
      'hubspot',
      [
        ...lines,
        '      hs_timestamp: { source: call.ended_at, required: true }', // line 11
        '      hs_call_title: { source: call.participant.name }',
        '      hs_call_body: { source: analysis.summary, required: true }', // line 13
      ].join('\n'),
    );
    const mapping = loadMappings(dir, 'hubspot');
    const input = { call: call(), analysis: null, followups: [], lookup: lookupFor('hubspot') };
    const err = await buildActivity(mapping, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MappingRequiredMissingError);
    expect(err).toMatchObject({
      code: 'MAPPING_REQUIRED_MISSING',
      callId: 'call_01HZX4',
      fields: ['writeback.activity.fields.hs_timestamp', 'writeback.activity.fields.hs_call_body'],
    });
    expect((err as Error).message).toBe(
      'call call_01HZX4: required mapping field(s) empty: ' +
        `writeback.activity.fields.hs_timestamp (${dir}/mappings/hubspot.yaml:11, source: call.ended_at); ` +
        `writeback.activity.fields.hs_call_body (${dir}/mappings/hubspot.yaml:13, source: analysis.summary)`,
    );
  });

  it('a required context field fails the context the same way', async () => {
    const { dir } = configWith(
      'hubspot',
      [
        'version: 1',
        'crm: hubspot',
        'context:',
        '  contact:',
        '    email: { source: contact.email, required: true }',
        ...ACTIVITY,
        '      x: { source: call.id }',
      ].join('\n'),
    );
    const mapping = loadMappings(dir, 'hubspot');
    const noMatch = { contact: null, company: null, deals: [], owner: null, matchedBy: 'none' as const };
    await expect(buildContext(mapping, { call: call(), lookup: noMatch })).rejects.toMatchObject({
      code: 'MAPPING_REQUIRED_MISSING',
      fields: ['context.contact.email'],
    });
  });

  it('a required field failing at run time, or of the wrong type, fails the call naming the field', async () => {
    const { dir } = configWith(
      'hubspot',
      [...lines, '      hs_call_title: { source: call.platform + 1, required: true }'].join('\n'),
    );
    const input = { call: call(), analysis: analysis(), followups: [], lookup: lookupFor('hubspot') };
    const err = await buildActivity(loadMappings(dir, 'hubspot'), input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MappingEvaluationError);
    expect(err).toMatchObject({
      code: 'MAPPING_EVALUATION_FAILED',
      field: 'writeback.activity.fields.hs_call_title',
    });
    expect((err as Error).message).toMatch(
      /hs_call_title: The left side of the "\+" operator must evaluate to a number/,
    );

    const typed = configWith(
      'hubspot',
      [...lines, '      crmsync_score_overall: { source: call.platform, type: number, required: true }'].join(
        '\n',
      ),
    );
    await expect(buildActivity(loadMappings(typed.dir, 'hubspot'), input)).rejects.toThrow(
      'call call_01HZX4: writeback.activity.fields.crmsync_score_overall: expected a number, got text of 4 character(s)',
    );
  });

  it('an optional field that fails is left out with a warning, and the rest is written', async () => {
    const { dir } = configWith(
      'hubspot',
      [
        ...lines,
        '      hs_call_title: { source: call.platform + 1 }',
        '      crmsync_score_overall: { source: call.platform, type: number }',
        '      hs_call_status: { source: "\'COMPLETED\'" }',
      ].join('\n'),
    );
    const warnings: string[] = [];
    const input = {
      call: call(),
      analysis: analysis(),
      followups: [],
      lookup: lookupFor('hubspot'),
      warnings,
    };
    const activity = await buildActivity(loadMappings(dir, 'hubspot'), input);
    expect(activity.properties).toMatchObject({ hs_call_status: 'COMPLETED' });
    expect(activity.properties).not.toHaveProperty('hs_call_title');
    expect(activity.properties).not.toHaveProperty('crmsync_score_overall');
    expect(warnings).toEqual([
      expect.stringMatching(
        /^MAPPING_FIELD_SKIPPED: writeback\.activity\.fields\.hs_call_title: The left side/,
      ),
      'MAPPING_FIELD_SKIPPED: writeback.activity.fields.crmsync_score_overall: expected a number, got text of 4 character(s)',
    ]);
  });
});
