/**
 * Every chaos scenario, in the order `npm run chaos` runs them. Add a scenario here; keep
 * `secrets` last, since it scans the output of all the others.
 */
import type { Scenario } from '../scenario.js';
import { clockSkewScenario } from './clockSkew.js';
import { crmStormScenario } from './crmStorm.js';
import { dbOutageScenario } from './dbOutage.js';
import { hostileWebhooksScenario } from './hostileWebhooks.js';
import { kill9Scenario } from './kill9.js';
import { replicasScenario } from './replicas.js';
import { rollingDeployScenario } from './rollingDeploy.js';
import { secretsScenario } from './secrets.js';
import { serviceStormScenario } from './serviceStorm.js';
import { twoReplicaCrmScenario } from './twoReplicaCrm.js';

export const SCENARIOS: Scenario[] = [
  kill9Scenario({ name: 'kill9-pg', database: 'postgres', kills: 20, calls: 40, budgetMs: 360_000 }),
  kill9Scenario({ name: 'kill9-embedded', database: 'embedded', kills: 5, calls: 15, budgetMs: 200_000 }),
  serviceStormScenario({ calls: 20, budgetMs: 150_000 }),
  crmStormScenario({ calls: 10, budgetMs: 180_000 }),
  dbOutageScenario,
  replicasScenario,
  hostileWebhooksScenario,
  twoReplicaCrmScenario({ calls: 80, budgetMs: 300_000 }),
  clockSkewScenario({ calls: 90, budgetMs: 360_000 }),
  rollingDeployScenario({ calls: 30, restarts: 4, budgetMs: 420_000 }),
  // Last: it scans the output of every scenario before it.
  secretsScenario,
];
