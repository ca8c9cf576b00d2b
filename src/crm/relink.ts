/**
 * Moving a written activity to the records a new match decision chose (`crm-sync rematch`): the
 * pure "what moves" diff both adapters plan their writes from (the port's types: src/crm/types.ts).
 *
 * Only the links crm-sync made are touched: an old record is unlinked only when the last decision
 * named it, and a link someone added by hand stays. The plan compares what the CRM shows now with
 * the new decision, so a run that died half-way, or a second run, writes only what is still missing.
 */
import type { ActivityLinks, LinkMove } from './types.js';

export type LinkKind = 'contact' | 'company' | 'deal';
export const LINK_KINDS: readonly LinkKind[] = ['contact', 'company', 'deal'];

const FIELD: Record<LinkKind, 'contactId' | 'companyId' | 'dealId'> = {
  contact: 'contactId',
  company: 'companyId',
  deal: 'dealId',
};

export const linkOf = (links: ActivityLinks, kind: LinkKind): string | undefined =>
  links[FIELD[kind]] || undefined;

/** One slot whose record changed between two decisions. */
export interface LinkChange {
  kind: LinkKind;
  from: string | undefined;
  to: string | undefined;
}

/** The slots (contact, company, deal) whose chosen record differs; empty when nothing moves. */
export function linkChanges(from: ActivityLinks, to: ActivityLinks): LinkChange[] {
  return LINK_KINDS.flatMap((kind) => {
    const a = linkOf(from, kind);
    const b = linkOf(to, kind);
    return a === b ? [] : [{ kind, from: a, to: b }];
  });
}

/** HubSpot: per linked object type, what to create and what to archive. */
export interface AssociationPlan {
  kind: LinkKind;
  create: string | undefined;
  archive: string[];
}

/**
 * The association writes that take an engagement from `from` to `to`, given the ids it is linked
 * to now (per kind): the new record linked where it is not yet, the old one unlinked where it is
 * still linked (with `exact`, every linked record other than the new one). Kinds with nothing to
 * do are left out.
 */
export function planAssociations(
  move: Pick<LinkMove, 'from' | 'to' | 'exact'>,
  current: Record<LinkKind, readonly string[]>,
): AssociationPlan[] {
  return LINK_KINDS.flatMap((kind) => {
    const old = linkOf(move.from, kind);
    const next = linkOf(move.to, kind);
    const now = current[kind];
    const create = next !== undefined && !now.includes(next) ? next : undefined;
    const stale = move.exact ? now.filter((id) => id !== next) : old !== next && old ? [old] : [];
    const archive = [...new Set(stale.filter((id) => now.includes(id)))];
    return create === undefined && archive.length === 0 ? [] : [{ kind, create, archive }];
  });
}

/** Salesforce: a Task's Who/What fields as read, and the update that moves it (only fields that change). */
export interface TaskLinks {
  WhoId: string | null;
  WhatId: string | null;
}

/**
 * The Task update that takes it from `from` to `to`, given its WhoId/WhatId now; null when it
 * already shows the new links. A Task names one What: the deal, else the account (none on a lead),
 * as the write-back sets it. Salesforce answers 18-character ids, so ids compare exactly.
 */
export function planTaskUpdate(
  move: Pick<LinkMove, 'from' | 'to' | 'exact'>,
  current: TaskLinks,
): Partial<TaskLinks> | null {
  const whatOf = (l: ActivityLinks) =>
    l.contactType === 'lead' ? undefined : (linkOf(l, 'deal') ?? linkOf(l, 'company'));
  const wanted = (next: string | undefined, old: string | undefined, now: string | null) =>
    // With no new record, the old one is cleared only if the Task still names it (ours to remove),
    // or whatever it names when the move is exact.
    next ?? (move.exact || (old !== undefined && now === old) ? null : now);
  const who = wanted(linkOf(move.to, 'contact'), linkOf(move.from, 'contact'), current.WhoId);
  const what =
    move.to.contactType === 'lead' ? null : wanted(whatOf(move.to), whatOf(move.from), current.WhatId);
  const update: Partial<TaskLinks> = {};
  if (who !== current.WhoId) update.WhoId = who;
  if (what !== current.WhatId) update.WhatId = what;
  return Object.keys(update).length > 0 ? update : null;
}
