import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractTarGz } from './untar.js';

/**
 * A pre-built embedded data directory (issue 24, item 6). initdb in WebAssembly runs a second
 * PGlite instance and peaks near 1.1 GB of RSS, more than a 512 MB container allows; loading a
 * data directory that `npm run build` made once (PGlite's `dumpDataDir`, a gzipped tar of a few
 * MB, extracted by streaming rather than through PGlite's `loadDataDir`, which holds it whole)
 * gives the first start the footprint of every later one. The build also applies the
 * migrations it ships with, so a first start does not load the schema engine either; `migrate()`
 * applies whatever the template lacks.
 *
 * The files belong to one PGlite (PostgreSQL) version: a template made by another is ignored and
 * the first start runs initdb as before.
 */

/** `<package root>/dist/pglite-template`, from src/store or dist/store alike. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../dist/pglite-template/', import.meta.url));
const TARBALL = 'datadir.tar.gz';
const MANIFEST = 'manifest.json';

export interface TemplateManifest {
  /** The @electric-sql/pglite version that wrote the files. */
  pglite: string;
  /** Migrations applied in it. */
  migrations: string[];
}

/** The installed PGlite's version (its package.json is not in its exports: found beside its entry). */
export function installedPgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${entry}`);
    dir = parent;
  }
  return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The template's tarball for this PGlite, or null (none built, or built by another version). */
export function templateTarball(dir = TEMPLATE_DIR, pglite = installedPgliteVersion()): string | null {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as TemplateManifest;
    const tarball = path.join(dir, TARBALL);
    return manifest.pglite === pglite && existsSync(tarball) ? tarball : null;
  } catch {
    return null;
  }
}

/**
 * Fills the new embedded data directory `dir` from the template and returns true; false (initdb
 * will run) when there is no usable template or `dir` already holds something. Extracted beside it
 * and renamed into place, so that a start interrupted half-way leaves no half a database.
 */
export async function seedFromTemplate(dir: string, templateDir: string): Promise<boolean> {
  const tarball = templateTarball(templateDir);
  if (!tarball) return false;
  if (existsSync(dir) && readdirSync(dir).length > 0) return false;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await extractTarGz(tarball, partial);
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  return true;
}

/** Writes the tarball and its manifest into `dir` (replacing any there). */
export function writeTemplate(dir: string, tarball: Uint8Array, manifest: TemplateManifest): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, TARBALL), tarball);
  writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}
