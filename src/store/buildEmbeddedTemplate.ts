import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from './database.js';
import {
  installedPgliteVersion,
  TEMPLATE_DIR,
  writeTemplate,
  type TemplateManifest,
} from './embeddedTemplate.js';
import { migrate, type MigrateOptions } from './migrations.js';

/**
 * Makes the embedded database's template (src/store/embeddedTemplate.ts) in `outDir`: initdb and
 * the migrations in a scratch directory, then PGlite's own dump of it. Run by `npm run build`
 * (scripts/build-pglite-template.mjs), where the ~1.1 GB of initdb is the build machine's.
 */
export async function buildEmbeddedTemplate(
  outDir = TEMPLATE_DIR,
  options: Pick<MigrateOptions, 'migrationsDir'> = {},
): Promise<TemplateManifest> {
  // A template already there would seed the scratch directory: start from initdb.
  rmSync(outDir, { recursive: true, force: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-template-'));
  try {
    const db = await openDatabase({ dataDir: work });
    let migrations: string[];
    try {
      await migrate(db, options);
      const rows = await db.prisma.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name`;
      migrations = rows.map((r) => r.migration_name);
    } finally {
      await db.close();
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = await PGlite.create({ dataDir: path.join(work, 'pglite') });
    let tarball: Uint8Array;
    try {
      tarball = new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
    } finally {
      await pglite.close();
    }
    const manifest = { pglite: installedPgliteVersion(), migrations };
    writeTemplate(outDir, tarball, manifest);
    return manifest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
