import type { Logger } from '../log/logger.js';
import type { Clock } from '../util/clock.js';
import type { GateOptions } from './hubspot/gate.js';
import type { CrmSlotLedger } from './limits/ledger.js';
import type { RefreshTokenStore } from './refreshTokens.js';
import type { CrmSettings } from './settings.js';
import type { CrmAdapter } from './types.js';

/** The upsert-key fields of a loaded mapping (src/mapping/types.ts, `writeback`), as the adapters read them. */
export interface UpsertKeyFields {
  activity: { idField?: string | undefined };
  followups?: { idField?: string | undefined } | null | undefined;
}

export interface CrmAdapterDeps {
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  /**
   * The loaded mapping, when there is one: its `id_field`s become the adapter's default upsert
   * keys (and the key `doctor` checks). Writes that carry their own `idField` use that anyway.
   */
  mapping?: { writeback: UpsertKeyFields } | undefined;
  /** HubSpot's request limits before any response reports them (default HubSpot's documented ones). */
  hubspotLimits?: GateOptions | undefined;
  /** Whether the request being made is for a live call; HubSpot's request gate sends those first. */
  isLive?: (() => boolean) | undefined;
  /**
   * Where the CRM's request limits are counted: shared through the database by replicas
   * (src/store/crmSlotLedger.ts); default this process alone.
   */
  ledger?: CrmSlotLedger | undefined;
  /** Refresh-token flows: the token store shared by every process (src/store/crmCredentialStore.ts). */
  refreshTokens?: RefreshTokenStore | undefined;
}

/**
 * The CrmAdapter for `config.crm`, built from that CRM's settings. Makes no request. Only the
 * configured CRM's adapter and SDK are loaded (jsforce alone is ~15 MB of RSS a HubSpot worker
 * has no use for).
 */
export async function createCrmAdapter(config: CrmSettings, deps: CrmAdapterDeps = {}): Promise<CrmAdapter> {
  const activityKey = deps.mapping?.writeback.activity.idField;
  const followupKey = deps.mapping?.writeback.followups?.idField;
  switch (config.crm) {
    case 'hubspot': {
      const { createHubSpotAdapter } = await import('./hubspot/index.js');
      return createHubSpotAdapter({
        config: config.hubspot,
        clock: deps.clock,
        logger: deps.logger,
        ...((deps.hubspotLimits || deps.isLive) && {
          limits: { ...deps.hubspotLimits, ...(deps.isLive && { isLive: deps.isLive }) },
        }),
        ...(activityKey ? { callIdProperty: activityKey } : {}),
        ...(followupKey ? { followupIdProperty: followupKey } : {}),
        ledger: deps.ledger,
        refreshTokens: deps.refreshTokens,
      });
    }
    case 'salesforce': {
      const { createSalesforceAdapter } = await import('./salesforce/index.js');
      return createSalesforceAdapter({
        config: config.salesforce,
        clock: deps.clock,
        logger: deps.logger,
        keyFields: {
          ...(activityKey ? { activity: activityKey } : {}),
          ...(followupKey ? { followup: followupKey } : {}),
        },
        ledger: deps.ledger,
        refreshTokens: deps.refreshTokens,
      });
    }
  }
}
