import {
  CrmAuthError,
  CrmDailyLimitError,
  CrmError,
  CrmFieldMissingError,
  CrmKeyFieldMissingError,
  CrmRejectedError,
  CrmValidationError,
} from '../errors.js';
import { rejection } from './errorMap.js';
import type { ActivityLinks, WriteResult } from '../types.js';
import { BATCH_SIZE, type LinkTypes } from './linkTypes.js';
import { moveEngagementLinks } from './relink.js';
import type { Runner } from './runner.js';
import type { BatchError } from './sdk.js';

/**
 * Writes engagements (calls, notes, tasks) keyed on a unique property, then links them, in
 * batches: one `batch/upsert` per 100 records and one v4 `batch/create` per linked object type.
 * A record the upsert created is linked at once. One it updated (a replay, a retry after a write
 * that died before or while linking) may carry links of an earlier match: its links are read and
 * made to equal this write's (relink.ts, `exact`), as a Salesforce upsert replaces a Task's
 * WhoId/WhatId, so a re-write after the match changed leaves no stale contact, company or deal.
 */
export interface WriteItem {
  key: string;
  properties: Record<string, string>;
  links: ActivityLinks;
}

const LINK_TARGETS = [
  ['contact', 'contacts', 'contactId'],
  ['company', 'companies', 'companyId'],
  ['deal', 'deals', 'dealId'],
] as const;

export async function upsertAndLink(
  run: Runner,
  objectType: string,
  idProperty: string,
  items: WriteItem[],
  linkTypes: LinkTypes,
): Promise<Map<string, WriteResult>> {
  const unique = [...new Map(items.map((i) => [i.key, i])).values()]; // the last write of a key wins
  const results = new Map<string, WriteResult>();
  let fatal: CrmError | undefined;
  for (let i = 0; i < unique.length; i += BATCH_SIZE) {
    const chunk = unique.slice(i, i + BATCH_SIZE);
    if (fatal) {
      for (const item of chunk) results.set(item.key, { key: item.key, ok: false, error: fatal });
      continue;
    }
    const written = await upsertChunk(run, objectType, idProperty, chunk, results, true);
    if (written.fatal) fatal = written.fatal;
    const created = chunk.filter((item) => written.ids.get(item.key)?.created === true);
    // An item naming no record at all is not unlinked from everything (never an activity on no record).
    const updated = chunk.filter(
      (item) => written.ids.get(item.key)?.created === false && Object.values(item.links).some(Boolean),
    );
    await linkChunk(run, objectType, written.ids, created, linkTypes, results);
    await relinkUpdated(run, objectType, written.ids, updated, linkTypes, results);
  }
  return results;
}

/** Makes each updated record's links equal its item's: missing ones created, others archived. */
async function relinkUpdated(
  run: Runner,
  objectType: string,
  ids: Map<string, { id: string }>,
  items: WriteItem[],
  linkTypes: LinkTypes,
  results: Map<string, WriteResult>,
): Promise<void> {
  if (items.length === 0) return;
  const moves = items.map((item) => ({
    callId: item.key,
    activityId: ids.get(item.key)!.id,
    from: {},
    to: item.links,
    exact: true,
  }));
  const moved = await moveEngagementLinks(run, objectType, linkTypes, moves);
  moved.forEach((r, i) => {
    if (!r.ok) results.set(items[i]!.key, { key: items[i]!.key, ok: false, error: r.error });
  });
}

type Written = { ids: Map<string, { id: string; created: boolean }>; fatal?: CrmError };

/**
 * Upserts one chunk; records failures in `results`; returns the HubSpot id of each written key.
 * HubSpot fails the whole batch for one input it refuses outright, so the refusal is narrowed to
 * its inputs: those using a property the portal lacks fail (fieldGaps.ts writes them again without
 * it) and the rest go once more; a portal rule's refusal (VALIDATION_ERROR) is halved until each
 * refused input stands alone, so the others are written (a chunk of n with b refused costs about
 * 2b·log2(n/b) more requests, 2n-1 when every input is refused).
 */
async function upsertChunk(
  run: Runner,
  objectType: string,
  idProperty: string,
  chunk: WriteItem[],
  results: Map<string, WriteResult>,
  mayRetry: boolean,
): Promise<Written> {
  const ids = new Map<string, { id: string; created: boolean }>();
  const fail = (item: WriteItem, error: Error) => results.set(item.key, { key: item.key, ok: false, error });
  let response;
  try {
    response = await run(`upsert ${objectType}`, (api) =>
      api.batchUpsert(
        objectType,
        chunk.map((item) => ({ idProperty, id: item.key, properties: item.properties })),
      ),
    );
  } catch (e) {
    let err = e instanceof CrmError ? e : new CrmRejectedError(String(e), 'hubspot');
    if (err instanceof CrmFieldMissingError) {
      err = err.fields.includes(idProperty)
        ? new CrmKeyFieldMissingError('hubspot', objectType, idProperty)
        : err.on(objectType);
    }
    if (err instanceof CrmValidationError) {
      if (chunk.length === 1) {
        fail(chunk[0]!, err.on(objectType));
        return { ids };
      }
      const half = Math.ceil(chunk.length / 2);
      const first = await upsertChunk(run, objectType, idProperty, chunk.slice(0, half), results, mayRetry);
      const second = await upsertChunk(run, objectType, idProperty, chunk.slice(half), results, mayRetry);
      return merged(first, second);
    }
    if (err instanceof CrmFieldMissingError && mayRetry) {
      const bad = chunk.filter((item) => err.fields.some((f) => f in item.properties));
      const good = chunk.filter((item) => !bad.includes(item));
      if (bad.length > 0 && good.length > 0) {
        for (const item of bad) fail(item, err);
        return upsertChunk(run, objectType, idProperty, good, results, false);
      }
    }
    for (const item of chunk) fail(item, err);
    const fatal = err instanceof CrmAuthError || err instanceof CrmDailyLimitError ? err : undefined;
    return fatal ? { ids, fatal } : { ids };
  }
  for (const r of response.results) {
    const key = r.properties[idProperty];
    if (key) ids.set(key, { id: r.id, created: r.created });
  }
  const failed = keyedErrors(response.errors, 'ids');
  for (const item of chunk) {
    const hit = ids.get(item.key);
    if (hit) {
      results.set(item.key, { key: item.key, ok: true, id: hit.id, created: hit.created });
      continue;
    }
    const error = failed.get(item.key);
    const message = `HubSpot did not write ${objectType} ${item.key}: ${error?.message ?? 'no result returned'}`;
    const refusal = error ? rejection({ ...error }, 207, message) : undefined;
    fail(
      item,
      refusal instanceof CrmValidationError || refusal instanceof CrmFieldMissingError
        ? refusal.on(objectType)
        : new CrmRejectedError(message, 'hubspot', 207),
    );
  }
  return { ids };
}

function merged(a: Written, b: Written): Written {
  const fatal = a.fatal ?? b.fatal;
  const ids = new Map([...a.ids, ...b.ids]);
  return fatal ? { ids, fatal } : { ids };
}

async function linkChunk(
  run: Runner,
  objectType: string,
  ids: Map<string, { id: string }>,
  chunk: WriteItem[],
  linkTypes: LinkTypes,
  results: Map<string, WriteResult>,
): Promise<void> {
  const jobs = LINK_TARGETS.map(async ([kind, toType, field]) => {
    const inputs = chunk.flatMap((item) => {
      const fromId = ids.get(item.key)?.id;
      const toId = item.links[field];
      return fromId && toId ? [{ item, fromId, toId, typeId: linkTypes[kind] }] : [];
    });
    if (inputs.length === 0) return;
    let errors: BatchError[];
    try {
      ({ errors } = await run(`associate ${objectType}->${toType}`, (api) =>
        api.associateBatch(objectType, toType, inputs),
      ));
    } catch (e) {
      for (const { item } of inputs) results.set(item.key, { key: item.key, ok: false, error: e as Error });
      return;
    }
    if (errors.length === 0) return;
    const byFrom = keyedErrors(errors, 'fromObjectId');
    for (const { item, fromId, toId } of inputs) {
      const error = byFrom.get(fromId) ?? (byFrom.size === 0 ? errors[0] : undefined);
      if (!error) continue;
      results.set(item.key, {
        key: item.key,
        ok: false,
        error: new CrmRejectedError(
          `HubSpot did not link ${objectType} to ${kind} ${toId}: ${error.message}`,
          'hubspot',
          207,
        ),
      });
    }
  });
  await Promise.all(jobs);
}

/** Batch errors by the ids their `context` names (`ids` for upserts, `fromObjectId` for links). */
function keyedErrors(errors: BatchError[], contextKey: string): Map<string, BatchError> {
  const out = new Map<string, BatchError>();
  for (const e of errors) for (const id of e.context?.[contextKey] ?? []) out.set(String(id), e);
  return out;
}
