import { describe, expect, it } from 'vitest';
import * as service from '@crm-sync/sandboxes/service/plans';
import { PLAN_NAMES, PLAN_PRESETS } from '../../src/budget/plans.js';

/**
 * The Service's plan limits are read from its spec twice: by the sandbox, which enforces them as
 * the vendor does, and by crm-sync's budget, which keeps under them. The product cannot import the
 * sandbox (a development package), so this test keeps the two readings equal.
 */
describe('plan presets', () => {
  it("crm-sync's budget knows the plans the Service sandbox enforces, with the same limits", () => {
    expect(PLAN_NAMES).toEqual(service.PLAN_NAMES);
    expect(PLAN_PRESETS).toEqual(service.PLAN_PRESETS);
  });
});
