/**
 * `doctor`'s view of the worker's database (issue 21): fields calls are written without and calls
 * a CRM rule refused, with the fix for each. A gap whose field the CRM checks just found (or
 * `--fix` created) is cleared here, so the next writes send the field again. Without a database
 * yet (a new install) there is nothing to show; a running worker holding the embedded database
 * is asked instead.
 */
import type { AppConfig } from '../../config/config.js';
import type { SetupCheck } from '../../crm/types.js';
import { embeddedExists } from '../../store/database.js';
import { clearFieldGaps, listFieldGaps } from '../../store/fieldGapRepo.js';
import { collectCrmStanding, crmStandingLines, type CrmStanding } from '../../ops/crmStanding.js';
import type { StatusSnapshot } from '../../ops/status.js';

/** `crmChecks`: the CRM's field checks, named `<object>.<field>` (verifySetup). */
export async function standingChecks(config: AppConfig, crmChecks: SetupCheck[]): Promise<SetupCheck[]> {
  if (!config.databaseUrl && !embeddedExists(config.dataDir)) return [];
  const { openDatabaseOrWorker, askWorker } = await import('../workerDb.js');
  let standing: CrmStanding;
  try {
    const database = await openDatabaseOrWorker(config);
    try {
      if (database) {
        const present = new Set(crmChecks.filter((c) => c.ok).map((c) => c.name.toLowerCase()));
        const gaps = await listFieldGaps(database.prisma, config.crm);
        const found = gaps.filter((g) => present.has(`${g.object}.${g.field}`.toLowerCase()));
        await clearFieldGaps(database.prisma, config.crm, found);
        standing = await collectCrmStanding(database.prisma, config.crm);
      } else {
        const status = await askWorker<StatusSnapshot>(config, '/status');
        standing = status.crmStanding ?? { fieldGaps: [], refusals: [] };
      }
    } finally {
      await database?.close();
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return [{ name: 'worker database', ok: false, detail: `could not read it: ${reason}` }];
  }
  const lines = crmStandingLines(standing);
  const of = (code: string) => lines.filter((l) => l.code === code).map((l) => l.message);
  const gaps = of('CRM_FIELD_MISSING');
  const refusals = of('CRM_VALIDATION_REJECTED');
  return [
    {
      name: 'fields calls are written without',
      ok: gaps.length === 0,
      detail: gaps.length === 0 ? 'none' : gaps.join('\n'),
      ...(gaps.length > 0
        ? { fix: 'create the fields named, then run doctor again (it clears what it finds)' }
        : {}),
    },
    {
      name: 'calls refused by a CRM rule',
      ok: refusals.length === 0,
      detail: refusals.length === 0 ? 'none' : refusals.join('\n'),
      ...(refusals.length > 0 ? { fix: 'map the property or relax the rule, then replay the calls' } : {}),
    },
  ];
}
