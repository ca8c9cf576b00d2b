import type { Record as SfRecord, SaveResult } from 'jsforce';
import { CrmRejectedError } from '../errors.js';
import { planTaskUpdate, type TaskLinks } from '../relink.js';
import type { LinkMove, LinkMoveResult, MoveOptions } from '../types.js';
import { queryRecords, type SalesforceContext } from './context.js';
import { recordFailure, type RecordError } from './errors.js';
import { packTerms } from './soqlBatch.js';
import { soqlString } from './soql.js';
import { MAX_RECORDS_PER_REQUEST } from './writes.js';

/**
 * `moveActivityLinks` on Salesforce: a Task's links are its WhoId and WhatId, a draft
 * EmailMessage's its RelatedToId (it names no Who: the write-back sets none), so a move is one field
 * update; a draft EmailMessage may be updated ("update() is supported when an email record is in
 * Draft status", Object Reference, "EmailMessage"). The records are read by id in a few SOQL queries per object, then only those whose
 * fields differ from the new decision are updated, 200 per sObject Collections PATCH with
 * allOrNone false (REST API Developer Guide, "Update Records Using sObject Collections"): each
 * record succeeds or fails alone. Setting the fields replaces the old links, so nothing is left
 * to remove.
 */
export async function moveTaskLinks(
  ctx: SalesforceContext,
  moves: LinkMove[],
  options: MoveOptions = {},
): Promise<LinkMoveResult[]> {
  const results: LinkMoveResult[] = [];
  const groups = new Map<SfObject, number[]>();
  moves.forEach((move, at) => {
    const object = objectOf(move);
    if (object === null) {
      const msg = `follow-up kind '${move.record}' is not available on Salesforce (use 'email' or 'task')`;
      results[at] = { key: move.callId, ok: false, error: new CrmRejectedError(msg, 'salesforce') };
    } else groups.set(object, [...(groups.get(object) ?? []), at]);
  });
  for (const [object, ats] of groups) {
    const done = await moveRecords(
      ctx,
      object,
      ats.map((at) => moves[at]!),
      options,
    );
    ats.forEach((at, i) => (results[at] = done[i]!));
  }
  return results;
}

type SfObject = 'Task' | 'EmailMessage';

function objectOf(move: LinkMove): SfObject | null {
  if (move.record === 'note') return null;
  return move.record === 'email' ? 'EmailMessage' : 'Task';
}

/** The fields of `object` that hold a record's links, as a Task's Who and What. */
const LINK_FIELDS: Record<SfObject, { who: string | null; what: string }> = {
  Task: { who: 'WhoId', what: 'WhatId' },
  EmailMessage: { who: null, what: 'RelatedToId' },
};

async function moveRecords(
  ctx: SalesforceContext,
  object: SfObject,
  moves: LinkMove[],
  options: MoveOptions,
): Promise<LinkMoveResult[]> {
  let current: Map<string, TaskLinks>;
  try {
    current = await readLinks(
      ctx,
      object,
      moves.map((m) => m.activityId),
    );
  } catch (error) {
    return moves.map((m) => ({ key: m.callId, ok: false, error: error as Error }));
  }
  const fields = LINK_FIELDS[object];
  /** By record id (a call's drafts share its call id). */
  const results = new Map<string, LinkMoveResult>();
  const updates: { move: LinkMove; record: Record<string, string | null> }[] = [];
  for (const move of moves) {
    const now = current.get(move.activityId);
    if (!now) {
      const error = new CrmRejectedError(
        `${object} ${move.activityId} was not found (deleted?)`,
        'salesforce',
        404,
      );
      results.set(move.activityId, { key: move.callId, ok: false, error });
      continue;
    }
    const plan = planTaskUpdate(move, now);
    const record: Record<string, string | null> = {};
    if (plan && 'WhoId' in plan && fields.who) record[fields.who] = plan.WhoId!;
    if (plan && 'WhatId' in plan) record[fields.what] = plan.WhatId!;
    const changed = Object.keys(record).length > 0;
    if (changed) updates.push({ move, record: { Id: move.activityId, ...record } });
    results.set(move.activityId, { key: move.callId, ok: true, writes: changed ? 1 : 0 });
  }
  if (!options.dryRun) {
    for (let i = 0; i < updates.length; i += MAX_RECORDS_PER_REQUEST) {
      const chunk = updates.slice(i, i + MAX_RECORDS_PER_REQUEST);
      let saved: (SaveResult & { errors?: RecordError[] })[];
      try {
        saved = await ctx.call(
          `update ${object}`,
          async () =>
            // jsforce sends an array as one PATCH composite/sobjects.
            (await ctx.conn.sobject(object).update(
              chunk.map((u) => u.record as { Id: string }),
              { allOrNone: false },
            )) as (SaveResult & { errors?: RecordError[] })[],
        );
      } catch (error) {
        for (const { move } of chunk)
          results.set(move.activityId, { key: move.callId, ok: false, error: error as Error });
        continue;
      }
      chunk.forEach(({ move }, j) => {
        const r = saved[j];
        if (r?.success) return;
        results.set(move.activityId, {
          key: move.callId,
          ok: false,
          error: recordFailure(r?.errors ?? [], move.activityId),
        });
      });
    }
  }
  return moves.map((m) => results.get(m.activityId)!);
}

/** Each record's links as a Task's (an EmailMessage's What is its RelatedToId), by id; ids Salesforce does not return are left out. */
async function readLinks(
  ctx: SalesforceContext,
  object: SfObject,
  ids: string[],
): Promise<Map<string, TaskLinks>> {
  const out = new Map<string, TaskLinks>();
  const fields = LINK_FIELDS[object];
  const select = ['Id', ...(fields.who ? [fields.who] : []), fields.what].join(', ');
  const soql = (terms: string) => `SELECT ${select} FROM ${object} WHERE Id IN (${terms})`;
  const terms = [...new Set(ids)].map((id) => ({ key: id, term: soqlString(id) }));
  for (const chunk of packTerms(terms, { soql, joiner: ', ' })) {
    const rows = await queryRecords<SfRecord>(
      ctx,
      `${object} links`,
      soql(chunk.map((t) => t.term).join(', ')),
      5000,
    );
    for (const row of rows) {
      const link = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
      out.set(String(row.Id), {
        WhoId: fields.who ? link(row[fields.who]) : null,
        WhatId: link(row[fields.what]),
      });
    }
  }
  return out;
}
