import { z } from 'zod';

/**
 * The shape of a mapping file (config/mappings/<crm>.yaml) as the admin writes it. Pure data: the
 * expressions are compiled afterwards (load.ts), so this schema also renders to the JSON Schema
 * editors use for completion (jsonSchema.ts -> config/mappings/mapping.schema.json).
 */

export const FORMATS = ['date', 'datetime', 'iso', 'epoch_ms', 'upper', 'lower', 'html', 'text'] as const;
export const TRANSFORM_NAMES = ['format', 'round', 'join', 'default', 'truncate', 'map'] as const;
export const VALUE_TYPES = ['string', 'number', 'boolean'] as const;
export const CRM_FIELD_TYPES = ['string', 'number', 'text', 'date', 'datetime', 'boolean'] as const;
export const DEAL_ORDERS = [
  'close_date_asc',
  'close_date_desc',
  'amount_desc',
  'last_modified_desc',
] as const;
export const FOLLOWUP_KINDS = { hubspot: ['note', 'task'], salesforce: ['email', 'task'] } as const;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const oneOf = (values: readonly string[]) => values.join(' | ');

const transformSchema = z
  .strictObject({
    format: z
      .enum(FORMATS, { error: `expected one of ${oneOf(FORMATS)}` })
      .describe(
        'date: 2025-03-01 (UTC) | datetime: 2025-03-01 14:30 UTC | iso: full ISO 8601 | epoch_ms: milliseconds | upper | lower | html: escape text, newlines become <br> | text: strip HTML tags',
      ),
    round: z
      .int({ error: 'expected a whole number of digits' })
      .min(0, 'expected 0 to 10 digits')
      .max(10, 'expected 0 to 10 digits')
      .describe('Round a number to this many decimal digits (strings holding numbers are converted).'),
    join: z
      .string({ error: 'expected the separator as a string' })
      .describe('Join an array with this separator.'),
    default: scalar.describe('Value used when the source is null, missing or empty.'),
    truncate: z
      .int({ error: 'expected a maximum number of characters' })
      .min(2, 'expected at least 2 characters')
      .max(10_000_000, 'expected at most 10000000 characters')
      .describe('Cut text to at most this many characters, ending with an ellipsis.'),
    map: z
      .record(z.string(), scalar, { error: 'expected a table of value: replacement' })
      .describe('Replace values found in this table; other values pass through unchanged.'),
  })
  .partial()
  .refine((t) => Object.values(t).filter((v) => v !== undefined).length === 1, {
    message: `a transform has exactly one key: ${oneOf(TRANSFORM_NAMES)}`,
  })
  .meta({ id: 'transform', minProperties: 1, maxProperties: 1, description: 'One transform step.' });

export const fieldSchema = z
  .strictObject({
    source: z
      .string({ error: 'expected a JSONata expression as a string' })
      .min(1, 'the expression is empty')
      .describe('JSONata expression evaluated over the input document (see docs/mappings.md).'),
    transform: z
      .array(transformSchema, { error: 'expected a list of transforms' })
      .optional()
      .describe('Applied in order to the value of `source`.'),
    type: z
      .enum(VALUE_TYPES, { error: `expected one of ${oneOf(VALUE_TYPES)}` })
      .optional()
      .describe('Coerce the final value to this type.'),
    required: z
      .boolean({ error: 'expected true or false' })
      .optional()
      .describe("If true, an empty value fails the call's sync with MAPPING_REQUIRED_MISSING."),
    custom: z
      .boolean({ error: 'expected true or false' })
      .optional()
      .describe(
        'Write-back only: a custom CRM field that `doctor` must check. Default: names starting crmsync_ or ending __c.',
      ),
    crm_type: z
      .enum(CRM_FIELD_TYPES, { error: `expected one of ${oneOf(CRM_FIELD_TYPES)}` })
      .optional()
      .describe(
        'Write-back only: the field type `doctor` expects (default: derived from type and transforms).',
      ),
    label: z
      .string()
      .optional()
      .describe('Write-back only: label used when `doctor --fix` creates the field.'),
  })
  .meta({ id: 'field', description: 'One mapped field.' });

const fieldsSchema = z
  .record(z.string(), fieldSchema, { error: 'expected a map of name: { source: ... }' })
  .meta({ id: 'fields', description: 'Output name -> mapped field.' });

const lookupFieldsSchema = z
  .strictObject({
    contact: z.array(z.string()),
    lead: z.array(z.string()),
    company: z.array(z.string()),
    deal: z.array(z.string()),
    owner: z.array(z.string()),
  })
  .partial()
  .describe(
    'Extra CRM properties to read, beyond those the expressions name (e.g. ones an expression reaches through a $variable).',
  );

/** The CRM object the `deal` section writes, per CRM. */
export const DEAL_OBJECTS = { hubspot: 'deals', salesforce: 'Opportunity' } as const;
export const DEFAULT_AVERAGE_OF = 3;

const dealSchema = z
  .strictObject({
    enabled: z
      .boolean({ error: 'expected true or false' })
      .optional()
      .describe('false turns the deal-level signals off (default true).'),
    average_of: z
      .int({ error: 'expected a whole number of calls' })
      .min(1, 'expected 1 to 50 calls')
      .max(50, 'expected 1 to 50 calls')
      .optional()
      .describe(
        `signals.average_score covers this many of the newest scored calls (default ${DEFAULT_AVERAGE_OF}).`,
      ),
    fields: fieldsSchema.describe(
      "HubSpot deal properties / Salesforce Opportunity fields, computed over all of the deal's synced calls.",
    ),
  })
  .describe(
    "Service -> CRM: signals over each deal's synced calls, written to the call deal when a newer call arrives.",
  );

export const mappingFileSchema = z
  .strictObject({
    version: z.literal(1, { error: 'expected version: 1' }),
    crm: z.enum(['hubspot', 'salesforce'], { error: 'expected hubspot | salesforce' }),
    lookup_fields: lookupFieldsSchema.optional(),
    context: z
      .strictObject({
        deal_rule: z
          .strictObject({
            order_by: z.enum(DEAL_ORDERS, { error: `expected one of ${oneOf(DEAL_ORDERS)}` }).optional(),
            limit: z
              .int({ error: 'expected a whole number' })
              .min(0, 'expected 0 to 50')
              .max(50, 'expected 0 to 50')
              .optional(),
          })
          .optional()
          .describe('Which open deals are pushed, and which one is the call deal (the first).'),
        contact: fieldsSchema.optional(),
        company: fieldsSchema.optional(),
        deals: fieldsSchema.optional().describe('Evaluated once per open deal, with `deal` bound to it.'),
        custom: fieldsSchema.optional(),
      })
      .describe('CRM -> Service: the body of POST /v1/calls/:id/context.'),
    writeback: z
      .strictObject({
        activity: z.strictObject({
          object: z.string().min(1).describe('CRM object: calls (HubSpot) or Task (Salesforce).'),
          id_field: z.string().min(1).describe('Unique external-id field holding the Service call id.'),
          fields: fieldsSchema,
        }),
        followups: z
          .strictObject({
            kind: z.enum(['note', 'task', 'email'], { error: 'expected note | task | email' }),
            object: z
              .string()
              .min(1)
              .optional()
              .describe('Default: notes/tasks (HubSpot), EmailMessage/Task.'),
            id_field: z.string().min(1).describe('Unique external-id field holding the draft id.'),
            fields: fieldsSchema,
          })
          .optional()
          .describe('One record per follow-up draft, with `followup` bound to it.'),
      })
      .describe('Service -> CRM: the call activity and the follow-up drafts.'),
    deal: dealSchema.optional(),
  })
  .superRefine((file, ctx) => {
    const kind = file.writeback.followups?.kind;
    const allowed: readonly string[] = FOLLOWUP_KINDS[file.crm];
    if (kind !== undefined && !allowed.includes(kind)) {
      ctx.addIssue({
        code: 'custom',
        path: ['writeback', 'followups', 'kind'],
        message: `expected ${oneOf(allowed)} for ${file.crm}`,
      });
    }
    if (file.deal && file.deal.enabled !== false && Object.keys(file.deal.fields).length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['deal', 'fields'],
        message: 'name at least one field to write on the deal, or set enabled: false',
      });
    }
  });

export type MappingFile = z.output<typeof mappingFileSchema>;
export type DealSpec = z.output<typeof dealSchema>;
export type FieldSpec = z.output<typeof fieldSchema>;
export type TransformSpec = z.output<typeof transformSchema>;
export type ValueType = (typeof VALUE_TYPES)[number];
export type CrmFieldType = (typeof CRM_FIELD_TYPES)[number];
