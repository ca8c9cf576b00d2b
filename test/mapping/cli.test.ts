import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { registerMappings, runMappingsCheck, runMappingsPreview } from '../../src/cli/commands/mappings.js';
import type { CrmLookup, DealRule, LookupFields, Participant } from '../../src/crm/types.js';
import type { PreviewSource } from '../../src/mapping/preview.js';
import { analysis, call, CONFIG_DIR, configWith, lookupFor, removeConfigDirs } from './helpers.js';

afterAll(removeConfigDirs);

const BROKEN = [
  'version: 1',
  'crm: hubspot',
  'context: {}',
  'writeback:',
  '  activity:',
  '    object: calls',
  '    id_field: crmsync_call_id',
  '    fields:',
  '      hs_call_title: { source: "call.(id" }', // line 9
  '',
].join('\n');

/** An in-memory stand-in for the Service client and CRM adapter; records what it was asked. */
function fakeSource(options: { analysisReady?: boolean } = {}) {
  const calls: string[] = [];
  const lookups: Array<{ participant: Participant; fields: LookupFields; rule: DealRule }> = [];
  let closed = false;
  const source: PreviewSource & { close(): Promise<void> } = {
    async getCall(id) {
      calls.push(`getCall ${id}`);
      return { ...call(), id };
    },
    async getAnalysis(id) {
      calls.push(`getAnalysis ${id}`);
      if (options.analysisReady === false) throw new Error('analysis not ready (409)');
      return analysis();
    },
    async lookup(participant, fields, rule): Promise<CrmLookup> {
      lookups.push({ participant, fields, rule });
      return lookupFor('hubspot');
    },
    async close() {
      closed = true;
    },
  };
  return { source, calls, lookups, isClosed: () => closed };
}

describe('mappings check', () => {
  it('says ok for the shipped files', () => {
    const result = runMappingsCheck({ configDir: CONFIG_DIR });
    expect(result).toMatchObject({ exitCode: 0, stream: 'out' });
    expect(result.output).toMatch(/^ok \(.*hubspot\.yaml, .*salesforce\.yaml\)$/);
  });

  it('lists each problem as file:line:col: path: message and fails', () => {
    const { dir, file } = configWith('hubspot', BROKEN);
    const result = runMappingsCheck({ configDir: dir, crm: 'hubspot' });
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(
      new RegExp(
        `^${file}:9:40: writeback\\.activity\\.fields\\.hs_call_title\\.source: JSONata syntax error: `,
      ),
    );
  });

  it('fails when there is no mapping file at all', () => {
    const { dir } = configWith('hubspot', BROKEN);
    expect(runMappingsCheck({ configDir: path.join(dir, 'nowhere') })).toMatchObject({
      exitCode: 1,
      stream: 'err',
    });
    expect(runMappingsCheck({ configDir: dir, crm: 'salesforce' }).output).toMatch(
      /salesforce\.yaml: file not found/,
    );
  });
});

describe('mappings preview', () => {
  it('shows context, activity and follow-ups for one call, reading only', async () => {
    const fake = fakeSource();
    const result = await runMappingsPreview(
      { openPreviewSource: async () => fake.source },
      { configDir: CONFIG_DIR, crm: 'hubspot', callId: 'call_42', json: true },
    );
    expect(result.exitCode).toBe(0);
    expect(fake.calls).toEqual(['getCall call_42', 'getAnalysis call_42']);
    expect(fake.lookups).toHaveLength(1);
    expect(fake.lookups[0]?.participant.email).toBe('dana@northwind.example');
    expect(fake.lookups[0]?.rule).toEqual({ orderBy: 'close_date_asc', limit: 3 });
    expect(fake.lookups[0]?.fields.contact).toContain('jobtitle');
    expect(fake.isClosed()).toBe(true);
    const preview = JSON.parse(result.output);
    expect(preview.context.value.body.contact.name).toBe('Dana Whitfield');
    expect(preview.activity.value.properties.crmsync_call_id).toBe('call_42');
    expect(preview.followups.value[0].properties.hs_note_body).toContain('(subject of the generated draft)');
  });

  it('prints readable sections and notes a missing analysis', async () => {
    const fake = fakeSource({ analysisReady: false });
    const result = await runMappingsPreview(
      { openPreviewSource: async () => fake.source },
      { configDir: CONFIG_DIR, crm: 'hubspot', callId: 'call_42' },
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('Note: analysis not available (analysis not ready (409))');
    expect(result.output).toContain('== Context pushed to the Service');
    expect(result.output).toContain('"crmsync_score_overall": 78'); // from the call's own scoring
  });

  it('shows a failing section and exits 1 when a required field is empty', async () => {
    const { dir } = configWith(
      'hubspot',
      BROKEN.replace('{ source: "call.(id" }', '{ source: call.missing, required: true }'),
    );
    const fake = fakeSource();
    const result = await runMappingsPreview(
      { openPreviewSource: async () => fake.source },
      { configDir: dir, crm: 'hubspot', callId: 'call_42' },
    );
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(
      /== Activity written to hubspot\n {2}ERROR MAPPING_REQUIRED_MISSING call call_42: /,
    );
  });

  it('explains when no Service/CRM connection is wired', async () => {
    const result = await runMappingsPreview({}, { configDir: CONFIG_DIR, crm: 'hubspot', callId: 'c' });
    expect(result).toMatchObject({ exitCode: 1, stream: 'err' });
  });
});

describe('the mappings command', () => {
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('parses options in-process and sets the exit code', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command().exitOverride();
    registerMappings(program, { out: (t) => out.push(t), err: (t) => err.push(t) });
    const { dir } = configWith('hubspot', BROKEN);
    await program.parseAsync(['mappings', 'check', '--crm', 'hubspot', '--config-dir', dir], {
      from: 'user',
    });
    expect(process.exitCode).toBe(1);
    expect(err.join('\n')).toContain('.yaml:9:40:');
    expect(out).toEqual([]);
  });

  it('exits 1 and names the line when run as a real process', async () => {
    const { dir, file } = configWith('hubspot', BROKEN);
    const root = path.join(import.meta.dirname, '..', '..');
    const run = promisify(execFile);
    const failure = await run('npx', ['tsx', 'src/cli/main.ts', 'mappings', 'check', '--config-dir', dir], {
      cwd: root,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toContain(
      `${file}:9:40: writeback.activity.fields.hs_call_title.source: JSONata syntax error`,
    );
  });
});
