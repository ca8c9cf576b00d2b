import type { Record as SfRecord, SaveResult } from 'jsforce';
import { CrmRejectedError } from '../errors.js';
import {
  planTaskUpdate,
  type LinkMove,
  type LinkMoveResult,
  type MoveOptions,
  type TaskLinks,
} from '../relink.js';
import { queryRecords, type SalesforceContext } from './context.js';
import { recordFailure, type RecordError } from './errors.js';
import { packTerms } from './soqlBatch.js';
import { soqlString } from './soql.js';
import { MAX_RECORDS_PER_REQUEST } from './writes.js';

/**
 * `moveActivityLinks` on Salesforce: a Task's links are its WhoId and WhatId, so a move is one
 * field update. The Tasks are read by id in a few SOQL queries, then only those whose fields
 * differ from the new decision are updated, 200 per sObject Collections PATCH with allOrNone false
 * (REST API Developer Guide, "Update Records Using sObject Collections"): each record succeeds or
 * fails alone. Setting the fields replaces the old links, so nothing is left to remove.
 */
export async function moveTaskLinks(
  ctx: SalesforceContext,
  moves: LinkMove[],
  options: MoveOptions = {},
): Promise<LinkMoveResult[]> {
  let current: Map<string, TaskLinks>;
  try {
    current = await readTaskLinks(
      ctx,
      moves.map((m) => m.activityId),
    );
  } catch (error) {
    return moves.map((m) => ({ key: m.callId, ok: false, error: error as Error }));
  }
  const results = new Map<string, LinkMoveResult>();
  const updates: { move: LinkMove; record: { Id: string } & Partial<TaskLinks> }[] = [];
  for (const move of moves) {
    const now = current.get(move.activityId);
    if (!now) {
      const error = new CrmRejectedError(
        `Task ${move.activityId} was not found (deleted?)`,
        'salesforce',
        404,
      );
      results.set(move.callId, { key: move.callId, ok: false, error });
      continue;
    }
    const update = planTaskUpdate(move, now);
    if (update) updates.push({ move, record: { Id: move.activityId, ...update } });
    results.set(move.callId, { key: move.callId, ok: true, writes: update ? 1 : 0 });
  }
  if (!options.dryRun) {
    for (let i = 0; i < updates.length; i += MAX_RECORDS_PER_REQUEST) {
      const chunk = updates.slice(i, i + MAX_RECORDS_PER_REQUEST);
      let saved: (SaveResult & { errors?: RecordError[] })[];
      try {
        saved = await ctx.call(
          'update Task',
          async () =>
            // jsforce sends an array as one PATCH composite/sobjects.
            (await ctx.conn.sobject('Task').update(
              chunk.map((u) => u.record),
              { allOrNone: false },
            )) as (SaveResult & { errors?: RecordError[] })[],
        );
      } catch (error) {
        for (const { move } of chunk)
          results.set(move.callId, { key: move.callId, ok: false, error: error as Error });
        continue;
      }
      chunk.forEach(({ move }, j) => {
        const r = saved[j];
        if (r?.success) return;
        results.set(move.callId, {
          key: move.callId,
          ok: false,
          error: recordFailure(r?.errors ?? [], move.activityId),
        });
      });
    }
  }
  return moves.map((m) => results.get(m.callId)!);
}

/** Each Task's WhoId and WhatId, by Task id; ids Salesforce does not return are left out. */
async function readTaskLinks(ctx: SalesforceContext, ids: string[]): Promise<Map<string, TaskLinks>> {
  const out = new Map<string, TaskLinks>();
  const soql = (terms: string) => `SELECT Id, WhoId, WhatId FROM Task WHERE Id IN (${terms})`;
  const terms = [...new Set(ids)].map((id) => ({ key: id, term: soqlString(id) }));
  for (const chunk of packTerms(terms, { soql, joiner: ', ' })) {
    const rows = await queryRecords<SfRecord>(
      ctx,
      'task links',
      soql(chunk.map((t) => t.term).join(', ')),
      5000,
    );
    for (const row of rows) {
      const link = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
      out.set(String(row.Id), { WhoId: link(row.WhoId), WhatId: link(row.WhatId) });
    }
  }
  return out;
}
