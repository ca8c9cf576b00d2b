import { parseConfig, type AppConfig } from '../../config/config.js';
import type { CrmName } from '../../crm/types.js';
import type { Logger } from '../../log/logger.js';
import type { PreviewSource } from '../../mapping/preview.js';
import type { Clock } from '../../util/clock.js';
import { holdProcessOpen } from '../keepAlive.js';

export type ClosablePreviewSource = PreviewSource & { close(): Promise<void> };

export interface PreviewSourceDeps {
  /** Default process.env. */
  env?: Record<string, string | undefined> | undefined;
  clock?: Clock | undefined;
  logger?: Logger | undefined;
}

/**
 * What `mappings preview` reads, from the real parts: the Service client (getCall, getAnalysis
 * at 'writeback' priority, paid from the workers' shared budget when the database has one) and the CRM adapter's lookup.
 * Nothing here writes to the Service or the CRM.
 */
export async function previewSourceFrom(
  config: AppConfig,
  deps: PreviewSourceDeps = {},
): Promise<ClosablePreviewSource> {
  // Loaded on use: the SDKs and HTTP client would slow every other command's start.
  const [{ openServiceFromConfig }, { createCrmAdapter }] = await Promise.all([
    import('../serviceFromConfig.js'),
    import('../../crm/factory.js'),
  ]);
  const { openRefreshTokens } = await import('../workerDb.js');
  const tokens = await openRefreshTokens(config);
  const crm = await createCrmAdapter(config, {
    clock: deps.clock,
    logger: deps.logger,
    refreshTokens: tokens?.refreshTokens,
  });
  const service = await openServiceFromConfig(config, { clock: deps.clock, logger: deps.logger });
  const opts = { priority: 'writeback' } as const;
  const release = holdProcessOpen();
  return {
    getCall: (callId) => service.client.getCall(callId, opts),
    getAnalysis: (callId) => service.client.getAnalysis(callId, opts),
    lookup: (participant, fields, rule) => crm.lookup(participant, fields, rule),
    close: () =>
      service
        .close()
        .finally(release)
        .finally(() => tokens?.close()),
  };
}

/**
 * The `openPreviewSource` that `registerMappings` takes: the configuration from `env` for the
 * CRM and config directory the command was given (so `--crm` also picks that CRM's credentials).
 */
export async function openPreviewSource(
  options: { crm: CrmName; configDir: string },
  deps: PreviewSourceDeps = {},
): Promise<ClosablePreviewSource> {
  const env = { ...(deps.env ?? process.env), CRM: options.crm, CONFIG_DIR: options.configDir };
  const config = parseConfig(env, { require: { service: true, crm: true } });
  return previewSourceFrom(config, deps);
}
