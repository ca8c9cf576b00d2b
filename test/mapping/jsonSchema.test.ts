import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_PATH, mappingJsonSchemaText } from '../../src/mapping/jsonSchema.js';

const root = path.join(import.meta.dirname, '..', '..');

describe('config/mappings/mapping.schema.json', () => {
  it('is up to date with the zod schema (regenerate: npx tsx src/mapping/writeJsonSchema.ts)', () => {
    // Compared as JSON: the committed file is prettier-formatted.
    const committed: unknown = JSON.parse(readFileSync(path.join(root, JSON_SCHEMA_PATH), 'utf8'));
    expect(committed).toEqual(JSON.parse(mappingJsonSchemaText()));
  });

  it('describes transforms and fields for editor completion', () => {
    const schema = JSON.parse(mappingJsonSchemaText()) as {
      definitions: Record<string, { properties: object }>;
    };
    expect(Object.keys(schema.definitions.transform?.properties ?? {})).toEqual([
      'format',
      'round',
      'join',
      'default',
      'truncate',
      'map',
    ]);
    expect(Object.keys(schema.definitions.field?.properties ?? {})).toContain('source');
  });

  it('is named by both shipped mapping files', () => {
    for (const crm of ['hubspot', 'salesforce']) {
      const first = readFileSync(path.join(root, 'config', 'mappings', `${crm}.yaml`), 'utf8').split('\n')[0];
      expect(first).toBe('# yaml-language-server: $schema=./mapping.schema.json');
    }
  });
});
