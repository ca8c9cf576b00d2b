import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEmbeddedTemplate } from '../../src/store/buildEmbeddedTemplate.js';
import { openDatabase } from '../../src/store/database.js';
import {
  installedPgliteVersion,
  seedFromTemplate,
  templateTarball,
  type TemplateManifest,
} from '../../src/store/embeddedTemplate.js';
import { migrate, readMigrations } from '../../src/store/migrations.js';
import { extractTarGz } from '../../src/store/untar.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-template-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the pre-built embedded data directory (issue 24: a first start without initdb)', () => {
  const templateDir = path.join(scratch, 'template');
  let manifest: TemplateManifest;

  beforeAll(async () => {
    manifest = await buildEmbeddedTemplate(templateDir);
  }, 300_000);

  it('is made for the installed PGlite and holds every migration', () => {
    expect(manifest.pglite).toBe(installedPgliteVersion());
    expect(manifest.migrations).toEqual(readMigrations().migrationDirectories.map((d) => d.path));
    expect(templateTarball(templateDir)).toBe(path.join(templateDir, 'datadir.tar.gz'));
  });

  it('gives a first start a migrated, empty database that keeps what is written to it', async () => {
    const dataDir = path.join(scratch, 'first-start');
    const db = await openDatabase({ dataDir, templateDir });
    try {
      expect(await migrate(db)).toEqual([]);
      expect(await db.prisma.syncStatus.count()).toBe(0);
      await db.prisma.syncStatus.create({
        data: { callId: 'call_1', crm: 'hubspot', state: 'written_back' },
      });
    } finally {
      await db.close();
    }
    expect(existsSync(path.join(dataDir, 'pglite.partial'))).toBe(false);
    // A second start finds the database and leaves it alone.
    const again = await openDatabase({ dataDir, templateDir });
    try {
      expect(await again.prisma.syncStatus.count()).toBe(1);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('is not used when another PGlite made it, nor over a directory that holds anything', async () => {
    expect(templateTarball(templateDir, '0.0.1')).toBeNull();
    expect(templateTarball(path.join(scratch, 'nowhere'))).toBeNull();
    const occupied = path.join(scratch, 'occupied');
    mkdirSync(occupied, { recursive: true });
    writeFileSync(path.join(occupied, 'note.txt'), 'mine');
    expect(await seedFromTemplate(occupied, templateDir)).toBe(false);
    expect(readFileSync(path.join(occupied, 'note.txt'), 'utf8')).toBe('mine');
  });
});

/** A one-entry ustar archive, gzipped. */
function tarGz(name: string, content: string, options: { truncate?: boolean } = {}): string {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'utf8');
  header.write('0000644\0', 100);
  header.write(`${Buffer.byteLength(content).toString(8).padStart(11, '0')}\0`, 124);
  header.write('0', 156);
  header.write('ustar\0', 257);
  const body = Buffer.alloc(Math.ceil(Buffer.byteLength(content) / 512) * 512);
  body.write(content);
  const archive = Buffer.concat([header, body, ...(options.truncate ? [] : [Buffer.alloc(1024)])]);
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.tar.gz`);
  writeFileSync(file, gzipSync(options.truncate ? archive.subarray(0, 600) : archive));
  return file;
}

describe('extracting the template', () => {
  it('writes the files of the archive under the target', async () => {
    const into = path.join(scratch, 'x1');
    await extractTarGz(tarGz('/base/1/PG_VERSION', '17\n'), into);
    expect(readFileSync(path.join(into, 'base/1/PG_VERSION'), 'utf8')).toBe('17\n');
  });

  it('refuses an entry that points outside the target, and an archive cut short', async () => {
    const into = path.join(scratch, 'x2');
    await expect(extractTarGz(tarGz('../escaped', 'x'), into)).rejects.toThrow(/outside/);
    expect(existsSync(path.join(scratch, 'escaped'))).toBe(false);
    await expect(extractTarGz(tarGz('/big', 'y'.repeat(2_000), { truncate: true }), into)).rejects.toThrow(
      /ends before/,
    );
  });
});
