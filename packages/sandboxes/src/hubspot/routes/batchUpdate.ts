import type { FastifyInstance } from 'fastify';
import { batchEnvelope, checkBatchSize, objectType, type SandboxState } from '../context.js';
import { errorBody, rejectUnknownProperties } from '../errors.js';

interface UpdateInput {
  id?: string;
  properties?: Record<string, unknown>;
}

/**
 * `POST /crm/objects/:version/:type/batch/update`: updates existing records by id ("Update a batch of
 * deals by internal ID, or unique property values", HubSpot CRM API reference; the SDK accepts 200
 * and 207). As with batch upsert, a property that does not exist fails the whole batch (400); an
 * id with no record, or a bad value, fails only its input, named in the 207's `context.ids`.
 */
export function registerBatchUpdate(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;
  app.post<{ Params: { type: string }; Body: { inputs?: UpdateInput[] } }>(
    '/crm/objects/:version/:type/batch/update',
    async (req, reply) => {
      const type = objectType(req.params.type);
      const inputs = checkBatchSize(req.body?.inputs) as UpdateInput[];
      const plans = inputs.map((input) => {
        const id = String(input.id ?? '');
        const existing = store.get(type, id);
        const props = input.properties ?? {};
        return { id, existing, props, problem: existing ? store.check(type, props, false, id) : undefined };
      });
      rejectUnknownProperties(plans.map((p) => p.problem));
      const results: unknown[] = [];
      const errors: unknown[] = [];
      for (const plan of plans) {
        if (!plan.existing) {
          errors.push(
            errorBody('OBJECT_NOT_FOUND', 'Could not get some objects', { context: { ids: [plan.id] } }),
          );
          continue;
        }
        if (plan.problem) {
          const message =
            plan.problem.kind === 'invalid'
              ? `Property values were not valid: ${JSON.stringify(plan.problem.problems)}`
              : String(plan.problem.error.body.message);
          errors.push(errorBody('VALIDATION_ERROR', message, { context: { ids: [plan.id] } }));
          continue;
        }
        const obj = store.update(type, plan.existing, plan.props);
        results.push(store.view(type, obj, Object.keys(plan.props)));
      }
      reply.code(errors.length > 0 ? 207 : 200);
      return batchEnvelope(state, results, errors);
    },
  );
}
