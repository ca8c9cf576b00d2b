import type { FieldRequirement } from '../crm/types.js';
import type { CrmFieldType } from './schema.js';
import type { CompiledField, Mapping, WritebackTarget } from './types.js';
import { followupsGeneratedAtField } from './writeback.js';

/** Custom by naming: HubSpot properties we create start `crmsync_`, Salesforce custom fields end `__c`. */
export function isCustomFieldName(name: string): boolean {
  return /^crmsync_/i.test(name) || /__c$/i.test(name);
}

/** Text longer than this needs a long-text field (Salesforce Text(255), HubSpot single-line text). */
const SHORT_TEXT_MAX = 255;

/**
 * The custom fields `doctor` must find on the CRM for this mapping: each target's id field
 * (unique text) and every write-back field that is custom (`custom: true`, or by its name unless
 * `custom: false`), with the type its value needs; the activity's follow-up generation stamp when
 * the mapping writes follow-ups; and the custom fields of the `deal` section while it is on.
 */
export function requiredFields(mapping: Mapping): FieldRequirement[] {
  const targets: WritebackTarget[] = [mapping.writeback.activity];
  if (mapping.writeback.followups) targets.push(mapping.writeback.followups);
  const out: FieldRequirement[] = [];
  for (const target of targets) {
    out.push({
      object: target.object,
      name: target.idField,
      type: 'string',
      unique: true,
      label: target === mapping.writeback.activity ? 'CRM Sync call id' : 'CRM Sync follow-up id',
    });
    for (const field of target.fields) {
      if (field.name === target.idField) continue;
      if (!(field.custom ?? isCustomFieldName(field.name))) continue;
      out.push({
        object: target.object,
        name: field.name,
        type: fieldType(field),
        label: field.label ?? labelOf(field.name),
      });
    }
  }
  // The activity's follow-up generation stamp, set by crm-sync whatever the mapping (writeback.ts).
  const generatedAt = followupsGeneratedAtField(mapping);
  if (generatedAt) {
    out.push({
      object: mapping.writeback.activity.object,
      name: generatedAt,
      type: 'datetime',
      label: 'CRM Sync follow-ups generated at',
    });
  }
  // The deal's signal fields, while the section is on; the deal object itself is standard.
  const deal = mapping.deal?.enabled ? mapping.deal : null;
  const dealFields = deal ? deal.fields.filter((f) => f.custom ?? isCustomFieldName(f.name)) : [];
  for (const field of dealFields) {
    out.push({
      object: deal!.object,
      name: field.name,
      type: fieldType(field),
      label: field.label ?? labelOf(field.name),
    });
  }
  return out;
}

function fieldType(field: CompiledField): CrmFieldType {
  if (field.crmType) return field.crmType;
  if (field.type === 'number' || field.type === 'boolean') return field.type;
  let type: CrmFieldType = 'string';
  for (const t of field.transforms) {
    if (t.kind === 'format' && t.format === 'date') type = 'date';
    if (t.kind === 'format' && (t.format === 'iso' || t.format === 'datetime')) type = 'datetime';
    if (t.kind === 'format' && t.format === 'epoch_ms') type = 'number';
    if (t.kind === 'format' && t.format === 'html') type = 'text';
    if (t.kind === 'truncate' && t.max > SHORT_TEXT_MAX) type = 'text';
    if (t.kind === 'round') type = 'number';
  }
  return type;
}

/** `crmsync_score_overall` -> "CRM Sync score overall"; `CrmSync_Objections_Handled__c` -> "CRM Sync Objections Handled". */
function labelOf(name: string): string {
  const words = name
    .replace(/__c$/i, '')
    .replace(/^crmsync_/i, '')
    .split('_')
    .filter(Boolean)
    .join(' ');
  return `CRM Sync ${words}`;
}
