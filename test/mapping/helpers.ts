import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CrmLookup, CrmName } from '../../src/crm/types.js';
import type { CallInput, FollowupDraftInput } from '../../src/mapping/types.js';

const fixtures = path.join(import.meta.dirname, 'fixtures');

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(fixtures, name), 'utf8')) as T;
}

export const call = (): CallInput & Record<string, unknown> => fixture('call.json');
export const analysis = (): Record<string, unknown> => fixture('analysis.json');
export const drafts = (): Array<FollowupDraftInput & Record<string, unknown>> => fixture('followups.json');
export const lookupFor = (crm: CrmName): CrmLookup => fixture(`${crm}-lookup.json`);

/** The shipped mapping files. */
export const CONFIG_DIR = path.join(import.meta.dirname, '..', '..', 'config');

const createdDirs: string[] = [];

/** A fresh config dir holding `mappings/<crm>.yaml` with `text`; returns the dir and the file. */
export function configWith(crm: CrmName, text: string): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-mapping-'));
  createdDirs.push(dir);
  mkdirSync(path.join(dir, 'mappings'));
  const file = path.join(dir, 'mappings', `${crm}.yaml`);
  writeFileSync(file, text);
  return { dir, file };
}

/** A small valid HubSpot mapping whose fields tests replace. */
export function minimalMapping(fields: string, context = ''): string {
  return [
    'version: 1',
    'crm: hubspot',
    'context:',
    context === '' ? '  contact: {}' : context,
    'writeback:',
    '  activity:',
    '    object: calls',
    '    id_field: crmsync_call_id',
    '    fields:',
    fields,
    '',
  ].join('\n');
}

/** Removes the config dirs `configWith` made (call from afterAll). */
export function removeConfigDirs(): void {
  for (const dir of createdDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
