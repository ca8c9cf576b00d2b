/**
 * The end-to-end case both CRMs share: records with empty fields (Gilfoyle without a first name at
 * Hooli, which has no website; Rita without a company of her own, matched by her email's domain)
 * get their context pushed and their activity written, with no warning.
 */
import { expect } from 'vitest';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  completeCall,
  createCall,
  syncRow,
  waitFor,
  waitWrittenBack,
  type WorkerProcess,
} from './harness.js';
import { pushedContexts } from './readback.js';

export async function expectEmptyFieldRecordsSynced(
  svc: ServiceSandbox,
  worker: WorkerProcess,
): Promise<string[]> {
  const gilfoyle = await createCall(svc, {
    name: 'Bertram Gilfoyle',
    email: 'gilfoyle@hooli.example',
    company: 'Hooli',
  });
  const rita = await createCall(svc, {
    name: 'Rita Rocket',
    email: 'rita@rockets.example',
    company: 'Rocket Labs',
  });
  const [g, r] = await waitFor('both contexts to be pushed', () => {
    const a = pushedContexts(svc, gilfoyle)[0];
    const b = pushedContexts(svc, rita)[0];
    return a && b ? [a, b] : undefined;
  });
  expect(g).toMatchObject({
    contact: { name: 'Gilfoyle', email: 'gilfoyle@hooli.example' },
    company: { name: 'Hooli' },
  });
  expect(g!.company).not.toHaveProperty('domain');
  expect(r).toMatchObject({ contact: { name: 'Rocket' }, company: { name: 'Rocket Labs' } });
  expect(r!.deals?.map((d) => d.name)).toEqual(['Rocket Labs - Launch']);

  await Promise.all([completeCall(svc, gilfoyle), completeCall(svc, rita)]);
  await waitWrittenBack(worker, [gilfoyle, rita]);
  for (const id of [gilfoyle, rita]) expect((await syncRow(worker, id))?.warnings).toEqual([]);
  const decision = (await syncRow(worker, rita))?.matchDecision as {
    company: { rule: string; label: string };
  };
  expect(decision.company).toMatchObject({ rule: 'email_domain', label: 'Rocket Labs' });
  return [gilfoyle, rita];
}
