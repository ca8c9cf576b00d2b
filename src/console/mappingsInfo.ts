/**
 * The mappings page: which mapping file is loaded, whether it validates (the same check as
 * `crm-sync mappings check`), and optionally a preview of what one call would write.
 */
import { existsSync, statSync } from 'node:fs';
import type { CrmName } from '../crm/types.js';
import { formatProblem, MappingError } from '../mapping/errors.js';
import { loadMappings, mappingFilePath } from '../mapping/load.js';

export interface MappingFileInfo {
  crm: CrmName;
  path: string;
  exists: boolean;
  modifiedAt: Date | null;
  /** Every problem as `file:line:col: path: message`; empty when the file is valid. */
  problems: string[];
  active: boolean;
}

export function mappingFiles(configDir: string, active: CrmName): MappingFileInfo[] {
  return (['hubspot', 'salesforce'] as const).map((crm) => {
    const path = mappingFilePath(configDir, crm);
    const exists = existsSync(path);
    let problems: string[] = [];
    if (exists) {
      try {
        loadMappings(configDir, crm);
      } catch (err) {
        problems =
          err instanceof MappingError
            ? err.problems.map(formatProblem)
            : [`${path}: ${(err as Error).message}`];
      }
    }
    return {
      crm,
      path,
      exists,
      modifiedAt: exists ? statSync(path).mtime : null,
      problems,
      active: crm === active,
    };
  });
}
