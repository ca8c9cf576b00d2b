import type { AppConfig } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { Mapping } from '../mapping/types.js';
import type { Clock } from '../util/clock.js';
import type { GateOptions } from './hubspot/gate.js';
import { createHubSpotAdapter } from './hubspot/index.js';
import { createSalesforceAdapter } from './salesforce/index.js';
import type { CrmAdapter } from './types.js';

export interface CrmAdapterDeps {
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  /**
   * The loaded mapping, when there is one: its `id_field`s become the adapter's default upsert
   * keys (and the key `doctor` checks). Writes that carry their own `idField` use that anyway.
   */
  mapping?: Pick<Mapping, 'writeback'> | undefined;
  /** HubSpot's request limits before any response reports them (default HubSpot's documented ones). */
  hubspotLimits?: GateOptions | undefined;
}

/** The CrmAdapter for `config.crm`, built from that CRM's settings. Makes no request. */
export function createCrmAdapter(config: AppConfig, deps: CrmAdapterDeps = {}): CrmAdapter {
  const activityKey = deps.mapping?.writeback.activity.idField;
  const followupKey = deps.mapping?.writeback.followups?.idField;
  switch (config.crm) {
    case 'hubspot':
      return createHubSpotAdapter({
        config: config.hubspot,
        clock: deps.clock,
        logger: deps.logger,
        ...(deps.hubspotLimits ? { limits: deps.hubspotLimits } : {}),
        ...(activityKey ? { callIdProperty: activityKey } : {}),
        ...(followupKey ? { followupIdProperty: followupKey } : {}),
      });
    case 'salesforce':
      return createSalesforceAdapter({
        config: config.salesforce,
        clock: deps.clock,
        logger: deps.logger,
        keyFields: {
          ...(activityKey ? { activity: activityKey } : {}),
          ...(followupKey ? { followup: followupKey } : {}),
        },
      });
  }
}
