/**
 * The Salesforce half of the install guide and the README's settings, as an admin meets Salesforce
 * today: connected apps can no longer be created (Salesforce Help 005228017), so the guide starts
 * from an External Client App, says which credential to create, names the Salesforce Help page each
 * step follows, and the README's configuration table lists every Salesforce setting with its default.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawConfigSchema } from '../../src/config/schema.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The text of the install guide's "## 2. Salesforce" section. */
function salesforceSection(): string {
  const guide = read('docs/install.md');
  const start = guide.search(/^## \d+\. Salesforce/m);
  expect(start).toBeGreaterThan(-1);
  const end = guide.slice(start + 1).search(/^## /m);
  return guide.slice(start, end === -1 ? undefined : start + 1 + end);
}

describe('docs/install.md, Salesforce', () => {
  const section = salesforceSection();

  it('asks for no new connected app, and starts from an External Client App', () => {
    // Quoted Salesforce Help titles ("New Connected Apps Can No Longer Be Created") are not steps.
    const instructions = section.replace(/"[^"]*"/g, '""');
    // The button that made one (Setup > App Manager > New Connected App).
    expect(instructions).not.toMatch(/New Connected App/);
    expect(instructions).not.toMatch(/(?<!Client )App Manager\s*>/);
    expect(instructions).not.toMatch(/\b(create|make|add) (a |the )?(new )?connected app/i);
    const flat = section.replace(/\s+/g, ' ');
    expect(flat).toContain('Setup > External Client App Manager > New External Client App');
    // Before any step that needs the app: the first mention of creating one is that one.
    expect(flat.indexOf('New External Client App')).toBeLessThan(flat.indexOf('Consumer Key'));
  });

  it('says which credential to create: new install, existing connected app, web OAuth', () => {
    const table = section.slice(section.indexOf('**Which credential should I create?**'));
    const rows = [...table.matchAll(/^\| ([^|]+) \| ([^|]+) \|/gm)].map((m) => `${m[1]!} | ${m[2]!}`);
    expect(rows.some((r) => /^New install.*client credentials/i.test(r))).toBe(true);
    expect(rows.some((r) => /^New install.*JWT bearer/i.test(r))).toBe(true);
    expect(rows.some((r) => /^Existing connected app.*keeps working/i.test(r))).toBe(true);
    expect(rows.some((r) => /web OAuth.*web server flow/i.test(r))).toBe(true);
  });

  it('names the Salesforce Help page each step follows', () => {
    const steps = section.split(/^(?=\d+\. \*\*)/m).slice(1);
    expect(steps.length).toBeGreaterThanOrEqual(6);
    for (const step of steps) expect(step, step.split('\n')[0]).toMatch(/Salesforce Help[ ,]/);
  });
});

describe('README configuration table, Salesforce settings', () => {
  const rows = new Map<string, string>();
  for (const [, names, fallback] of read('README.md').matchAll(
    /^\| (`[A-Z_]+`(?: \/ `[A-Z_]+`)*) \| ([^|]+) \|/gm,
  )) {
    for (const name of names!.matchAll(/`([A-Z_]+)`/g)) rows.set(name[1]!, fallback!.trim());
  }

  it('lists every Salesforce setting and CREDENTIALS_KEY with the default the code uses', () => {
    const keys = Object.keys(rawConfigSchema.shape).filter(
      (k) => k.startsWith('SALESFORCE_') || k === 'CREDENTIALS_KEY',
    );
    expect(keys.length).toBeGreaterThan(8);
    for (const key of keys) {
      const shape = rawConfigSchema.shape[key as keyof typeof rawConfigSchema.shape];
      const fallback = shape.safeParse(undefined).data;
      expect(rows.get(key), key).toBe(fallback === undefined ? '–' : `\`${String(fallback)}\``);
    }
  });
});
