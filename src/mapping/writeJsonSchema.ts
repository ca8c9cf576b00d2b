import { writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { JSON_SCHEMA_PATH, mappingJsonSchemaText } from './jsonSchema.js';

// Script: `npx tsx src/mapping/writeJsonSchema.ts` from the repository root rewrites the schema,
// formatted as `prettier --check` expects it.
const options = (await resolveConfig(JSON_SCHEMA_PATH)) ?? {};
writeFileSync(JSON_SCHEMA_PATH, await format(mappingJsonSchemaText(), { ...options, parser: 'json' }));
process.stdout.write(`wrote ${JSON_SCHEMA_PATH}\n`);
