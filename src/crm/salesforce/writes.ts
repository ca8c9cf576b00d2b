import type { UpsertResult } from 'jsforce';
import {
  CrmError,
  CrmFieldMissingError,
  CrmKeyFieldMissingError,
  CrmRejectedError,
  CrmValidationError,
} from '../errors.js';
import type { ActivityLinks, ActivityWrite, FollowupWrite, WriteResult } from '../types.js';
import type { SalesforceContext } from './context.js';
import { createOnlyFields, fitToFields, type ObjectInfo } from './describe.js';
import { errorFields, recordFailure, type RecordError } from './errors.js';

/** sObject Collections upsert takes at most 200 records per request. */
export const MAX_RECORDS_PER_REQUEST = 200;

export interface KeyFields {
  /** External-id field of the call's Task (default CrmSync_Call_Id__c). */
  activity: string;
  /** External-id field of follow-up EmailMessages and Tasks (default CrmSync_Followup_Id__c). */
  followup: string;
}

type Values = Record<string, string | number | boolean | null>;

interface Item {
  key: string;
  record: Values;
}

type RawResult = UpsertResult & { errors?: RecordError[]; created?: boolean };

/** Who/What links: a Task on a lead cannot also name an account or opportunity. */
function linkFields(links: ActivityLinks, whatField: 'WhatId' | 'RelatedToId', withWho: boolean): Values {
  const out: Values = {};
  if (withWho && links.contactId) out.WhoId = links.contactId;
  if (links.contactType === 'lead') out[whatField] = null;
  else if (links.dealId ?? links.companyId) out[whatField] = (links.dealId ?? links.companyId)!;
  return out;
}

/**
 * Keys this process has seen written, per object and key field, so a replay leaves out the
 * create-only fields up front instead of paying a refused first attempt. Oldest forgotten first.
 */
export class KnownKeys {
  private keys = new Set<string>();
  constructor(private readonly max = 50_000) {}
  has(scope: string, key: string): boolean {
    return this.keys.has(`${scope}\u0000${key.toLowerCase()}`);
  }
  add(scope: string, key: string): void {
    const k = `${scope}\u0000${key.toLowerCase()}`;
    this.keys.delete(k);
    this.keys.add(k);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value!);
  }
}

/**
 * One collection upsert; a refusal of the whole request fails each of its records (Salesforce
 * refuses a field the org lacks for the whole request, "No such column"), naming the object.
 */
async function upsertChunk(
  ctx: SalesforceContext,
  type: string,
  keyField: string,
  records: Values[],
): Promise<(RawResult | CrmError)[]> {
  try {
    const results = await ctx.call(`upsert ${type}`, async () => {
      // jsforce sends an array as one PATCH composite/sobjects/<type>/<keyField> (API >= 46).
      return (await ctx.conn.sobject(type).upsert(records, keyField, { allOrNone: false })) as RawResult[];
    });
    return results;
  } catch (err) {
    if (!(err instanceof CrmRejectedError || err instanceof CrmValidationError)) throw err;
    const named =
      err instanceof CrmRejectedError && !(err instanceof CrmFieldMissingError) ? err : err.on(type);
    return records.map(() => keyed(named, type, keyField));
  }
}

/** A field refusal naming the upsert key itself: nothing can be written once without it. */
function keyed(err: CrmError, type: string, keyField: string): CrmError {
  const key = keyField.toLowerCase();
  if (err instanceof CrmFieldMissingError && err.fields.some((f) => f.toLowerCase() === key))
    return new CrmKeyFieldMissingError('salesforce', type, keyField);
  return err;
}

/**
 * Upserts records on `keyField`, 200 per request; jsforce resolves even when records fail, so
 * each result's `success` is checked. Fields Salesforce accepts on create only (TaskSubtype) are
 * sent every time; records it then refuses for them already exist, and go once more without.
 */
async function upsertRecords(
  ctx: SalesforceContext,
  info: ObjectInfo,
  keyField: string,
  items: Item[],
  known: KnownKeys,
): Promise<Map<string, WriteResult>> {
  const scope = `${info.name}.${keyField}`;
  const out = new Map<string, WriteResult>();
  const latest = new Map<string, Item>();
  for (const item of items) {
    if (item.key.trim() === '') {
      const error = new CrmRejectedError('empty upsert key', 'salesforce');
      out.set(item.key.toLowerCase(), { key: item.key, ok: false, error });
      continue;
    }
    latest.set(item.key.toLowerCase(), item); // the last write of a key wins
  }
  const unique = [...latest.values()];
  for (let i = 0; i < unique.length; i += MAX_RECORDS_PER_REQUEST) {
    const chunk = unique.slice(i, i + MAX_RECORDS_PER_REQUEST);
    const records = chunk.map((it) => {
      const record = { ...sdkSafe(it.record), [keyField]: it.key };
      return known.has(scope, it.key) ? stripFields(record, createOnlyFields(info, record)) : record;
    });
    const results = await upsertChunk(ctx, info.name, keyField, records);
    const retry: number[] = [];
    results.forEach((res, j) => {
      if (res instanceof CrmError || res.success) return;
      const createOnly = createOnlyFields(info, records[j]!);
      const fields = (res.errors ?? []).flatMap(errorFields);
      if (createOnly.some((f) => fields.includes(f))) retry.push(j);
    });
    if (retry.length > 0) {
      const again = retry.map((j) => stripFields(records[j]!, createOnlyFields(info, records[j]!)));
      const second = await upsertChunk(ctx, info.name, keyField, again);
      retry.forEach((j, n) => (results[j] = second[n]!));
    }
    chunk.forEach((it, j) => {
      const result = toWriteResult(it.key, results[j], info.name, keyField);
      if (result.ok) known.add(scope, it.key);
      out.set(it.key.toLowerCase(), result);
    });
  }
  return out;
}

/** jsforce takes a record's `type` key as its sObject type: send such a field as `Type`. */
function sdkSafe(record: Values): Values {
  if (!('type' in record)) return record;
  const { type, ...rest } = record;
  return { ...rest, Type: type ?? null };
}

/** `record` without `fields`; `anyCase` also drops differently-cased spellings of them. */
function stripFields(record: Values, fields: string[], anyCase = false): Values {
  const drop = new Set(fields.map((f) => (anyCase ? f.toLowerCase() : f)));
  return Object.fromEntries(Object.entries(record).filter(([k]) => !drop.has(anyCase ? k.toLowerCase() : k)));
}

function toWriteResult(
  key: string,
  res: RawResult | CrmError | undefined,
  object: string,
  keyField: string,
): WriteResult {
  if (res instanceof CrmError) return { key, ok: false, error: res };
  if (!res) return { key, ok: false, error: new CrmRejectedError(`no result for ${key}`, 'salesforce') };
  if (!res.success || !res.id) {
    return { key, ok: false, error: keyed(recordFailure(res.errors ?? [], key, object), object, keyField) };
  }
  return { key, ok: true, id: res.id, created: res.created === true };
}

function fit(ctx: SalesforceContext, info: ObjectInfo, key: string, values: Values): Values {
  const fitted = fitToFields(info, values);
  if (fitted.truncated.length > 0) {
    ctx.logger.debug(
      { key, object: info.name, fields: fitted.truncated },
      'salesforce text cut to field length',
    );
  }
  return fitted.values;
}

interface Target {
  object: 'Task' | 'EmailMessage';
  keyField: string;
  /** Defaults the mapping may override (a mapping value wins). */
  defaults: (info: ObjectInfo) => Values;
  whatField: 'WhatId' | 'RelatedToId';
  withWho: boolean;
}

interface Keyed {
  key: string;
  properties: Values;
  links: ActivityLinks;
}

/** Writes grouped by object and key field (the mapping's `id_field`, else the default), upserted. */
async function upsertTargets(
  ctx: SalesforceContext,
  known: KnownKeys,
  jobs: { write: Keyed; target: Target }[],
): Promise<Map<string, WriteResult>> {
  const groups = new Map<string, { target: Target; writes: Keyed[] }>();
  for (const { write, target } of jobs) {
    const id = `${target.object}.${target.keyField.toLowerCase()}`;
    const group = groups.get(id) ?? { target, writes: [] };
    group.writes.push(write);
    groups.set(id, group);
  }
  const results = new Map<string, WriteResult>();
  for (const { target, writes } of groups.values()) {
    const info = await ctx.describe.get(target.object);
    const items = writes.map((w) => {
      // The key goes in once, under the key field's own spelling (added by upsertRecords).
      const props = stripFields(w.properties, [target.keyField], true);
      return {
        key: w.key,
        record: {
          ...target.defaults(info),
          ...fit(ctx, info, w.key, props),
          ...linkFields(w.links, target.whatField, target.withWho),
        },
      };
    });
    for (const [k, v] of await upsertRecords(ctx, info, target.keyField, items, known)) results.set(k, v);
  }
  return results;
}

const hasSubtype = (info: ObjectInfo) => info.fields.has('tasksubtype');

/** The call's Task: a completed call (TaskSubtype Call) on the contact or lead and the deal or account. */
export async function upsertActivities(
  ctx: SalesforceContext,
  writes: ActivityWrite[],
  keys: KeyFields,
  known: KnownKeys,
): Promise<WriteResult[]> {
  const jobs = writes.map((w) => ({
    write: { key: w.callId, properties: w.properties, links: w.links },
    target: {
      object: 'Task' as const,
      keyField: w.idField ?? keys.activity,
      defaults: (info: ObjectInfo): Values => ({
        Status: 'Completed',
        ...(hasSubtype(info) ? { TaskSubtype: 'Call' } : {}),
      }),
      whatField: 'WhatId' as const,
      withWho: true,
    },
  }));
  const results = await upsertTargets(ctx, known, jobs);
  return writes.map((w) => ({ ...results.get(w.callId.toLowerCase())!, key: w.callId }));
}

/**
 * Follow-up drafts keyed on `key` (call id and draft id): kind 'email' is a draft EmailMessage (Status '5' unless
 * the mapping says otherwise) related to the deal or account; kind 'task' is a Task to do.
 * Kind 'note' is HubSpot's and is refused here.
 */
export async function upsertFollowups(
  ctx: SalesforceContext,
  writes: FollowupWrite[],
  keys: KeyFields,
  known: KnownKeys,
): Promise<WriteResult[]> {
  const jobs = writes
    .filter((w) => w.kind === 'email' || w.kind === 'task')
    .map((w) => ({
      write: { key: w.key, properties: w.properties, links: w.links },
      target:
        w.kind === 'email'
          ? {
              object: 'EmailMessage' as const,
              keyField: w.idField ?? keys.followup,
              defaults: (): Values => ({ Status: '5' }),
              whatField: 'RelatedToId' as const,
              withWho: false,
            }
          : {
              object: 'Task' as const,
              keyField: w.idField ?? keys.followup,
              defaults: (info: ObjectInfo): Values => ({
                Status: 'Not Started',
                ...(hasSubtype(info) ? { TaskSubtype: 'Task' } : {}),
              }),
              whatField: 'WhatId' as const,
              withWho: true,
            },
    }));
  const results = await upsertTargets(ctx, known, jobs);
  return writes.map((w): WriteResult => {
    const found = w.kind === 'note' ? undefined : results.get(w.key.toLowerCase());
    if (found) return { ...found, key: w.key };
    const msg = `follow-up kind '${w.kind}' is not available on Salesforce (use 'email' or 'task')`;
    return { key: w.key, ok: false, error: new CrmRejectedError(msg, 'salesforce') };
  });
}
