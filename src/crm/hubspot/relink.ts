import { CrmRejectedError } from '../errors.js';
import { LINK_KINDS, planAssociations, type AssociationPlan, type LinkKind } from '../relink.js';
import type { LinkMove, LinkMoveResult, MoveOptions } from '../types.js';
import { associationsOf } from './batchReads.js';
import type { Runner } from './runner.js';
import type { BatchError } from './sdk.js';
import { BATCH_SIZE, type LinkTypes } from './linkTypes.js';

const TO_TYPE: Record<LinkKind, string> = { contact: 'contacts', company: 'companies', deal: 'deals' };

/**
 * `moveActivityLinks` on HubSpot, for engagements of one object type: their links are read with
 * one v4 batch read per linked type, then the new links are created (v4 batch create, as the
 * write-back links) before the old ones are archived (v4 batch archive, "Associations v4 > Batch >
 * Delete"), per type and in batches of 100: a run that stops in between leaves the engagement on
 * both records, never on neither, and the next run only archives. Archive removes every type id
 * between the two records, which is what a move means. Failures are kept per engagement id (a
 * call's drafts share its call id).
 */
export async function moveEngagementLinks(
  run: Runner,
  objectType: string,
  linkTypes: LinkTypes,
  moves: LinkMove[],
  options: MoveOptions = {},
): Promise<LinkMoveResult[]> {
  /** By engagement id. */
  const failed = new Map<string, Error>();
  const ids = [...new Set(moves.map((m) => m.activityId))];
  let current: Map<LinkKind, Map<string, { toId: string }[]>>;
  try {
    current = new Map();
    for (const kind of LINK_KINDS)
      current.set(kind, await associationsOf(run, objectType, TO_TYPE[kind], ids));
  } catch (error) {
    return moves.map((m) => ({ key: m.callId, ok: false, error: error as Error }));
  }
  const plans = moves.map((move) => {
    const now = (kind: LinkKind) => (current.get(kind)!.get(move.activityId) ?? []).map((l) => l.toId);
    return {
      move,
      plan: planAssociations(move, { contact: now('contact'), company: now('company'), deal: now('deal') }),
    };
  });
  const writesOf = (plan: AssociationPlan[]) =>
    plan.reduce((n, p) => n + (p.create === undefined ? 0 : 1) + p.archive.length, 0);
  if (!options.dryRun) {
    for (const kind of LINK_KINDS) {
      const steps = plans.flatMap(({ move, plan }) => {
        const step = plan.find((p) => p.kind === kind);
        return step && !failed.has(move.activityId) ? [{ move, step }] : [];
      });
      await createLinks(run, objectType, kind, linkTypes[kind], steps, failed);
      await archiveLinks(
        run,
        objectType,
        kind,
        steps.filter(({ move }) => !failed.has(move.activityId)),
        failed,
      );
    }
  }
  return plans.map(({ move, plan }) => {
    const error = failed.get(move.activityId);
    return error
      ? { key: move.callId, ok: false, error }
      : { key: move.callId, ok: true, writes: writesOf(plan) };
  });
}

type Step = { move: LinkMove; step: AssociationPlan };

async function createLinks(
  run: Runner,
  objectType: string,
  kind: LinkKind,
  typeId: number,
  steps: Step[],
  failed: Map<string, Error>,
): Promise<void> {
  const inputs = steps.flatMap(({ move, step }) =>
    step.create === undefined ? [] : [{ move, fromId: move.activityId, toId: step.create, typeId }],
  );
  for (let i = 0; i < inputs.length; i += BATCH_SIZE) {
    const chunk = inputs.slice(i, i + BATCH_SIZE);
    let errors: BatchError[];
    try {
      ({ errors } = await run(`associate ${objectType}->${TO_TYPE[kind]}`, (api) =>
        api.associateBatch(objectType, TO_TYPE[kind], chunk),
      ));
    } catch (error) {
      for (const { move } of chunk) failed.set(move.activityId, error as Error);
      continue;
    }
    for (const e of errors) {
      const from = new Set((e.context?.fromObjectId ?? []).map(String));
      for (const { move, toId } of chunk) {
        if (from.size > 0 && !from.has(move.activityId)) continue;
        failed.set(
          move.activityId,
          new CrmRejectedError(
            `HubSpot did not link ${objectType} to ${kind} ${toId}: ${e.message}`,
            'hubspot',
            207,
          ),
        );
      }
    }
  }
}

async function archiveLinks(
  run: Runner,
  objectType: string,
  kind: LinkKind,
  steps: Step[],
  failed: Map<string, Error>,
): Promise<void> {
  const inputs = steps.flatMap(({ move, step }) =>
    step.archive.length === 0 ? [] : [{ move, fromId: move.activityId, toIds: step.archive }],
  );
  for (let i = 0; i < inputs.length; i += BATCH_SIZE) {
    const chunk = inputs.slice(i, i + BATCH_SIZE);
    try {
      await run(`unlink ${objectType}->${TO_TYPE[kind]}`, (api) =>
        api.archiveAssociations(objectType, TO_TYPE[kind], chunk),
      );
    } catch (error) {
      for (const { move } of chunk) failed.set(move.activityId, error as Error);
    }
  }
}
