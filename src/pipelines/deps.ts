import type { CrmAdapter, CrmName } from '../crm/types.js';
import type { Logger } from '../log/logger.js';
import type { Mapping } from '../mapping/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ServiceClient } from '../service/types.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import type { LookupCache } from './lookupCache.js';

/** Everything a pipeline touches, passed in so that tests can build it from real or fake parts. */
export interface PipelineDeps {
  db: Db;
  crmName: CrmName;
  service: ServiceClient;
  crm: CrmAdapter;
  mapping: Mapping;
  lookups: LookupCache;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}
