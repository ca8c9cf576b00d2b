import { z } from 'zod';
import { mappingFileSchema } from './schema.js';

/** Where the generated schema lives: beside the mapping files, which name it in their first line. */
export const JSON_SCHEMA_PATH = 'config/mappings/mapping.schema.json';

/**
 * The JSON Schema of a mapping file, rendered from the zod schema so the two cannot drift (a
 * test compares it with the committed file). Regenerate with
 * `npx tsx src/mapping/writeJsonSchema.ts`.
 */
export function mappingJsonSchemaText(): string {
  const schema = z.toJSONSchema(mappingFileSchema, { io: 'input', target: 'draft-7' });
  const titled = {
    ...schema,
    title: 'crm-sync field mapping',
    description: 'What crm-sync pushes as call context and writes back to the CRM. See docs/mappings.md.',
  };
  return `${JSON.stringify(titled, null, 2)}\n`;
}
