import type { ObjectType, PropertyDef, PropertyType } from './model.js';
import { OBJECT_TYPES } from './model.js';

/**
 * Property definitions: the HubSpot-defined ones the sandbox knows, and the crm-sync custom ones
 * (seeded unless the sandbox starts without them, to exercise `doctor --fix`).
 */
type Spec = [name: string, type: PropertyType, fieldType: string, extra?: Partial<PropertyDef>];

const READ_ONLY = { readOnlyValue: true };

const STANDARD: Record<ObjectType, Spec[]> = {
  contacts: [
    ['email', 'string', 'text'],
    ['firstname', 'string', 'text'],
    ['lastname', 'string', 'text'],
    ['company', 'string', 'text'],
    ['jobtitle', 'string', 'text'],
    ['phone', 'string', 'phonenumber'],
    ['lifecyclestage', 'enumeration', 'radio'],
    ['hubspot_owner_id', 'enumeration', 'select'],
  ],
  companies: [
    ['name', 'string', 'text'],
    ['domain', 'string', 'text'],
    ['industry', 'enumeration', 'select'],
    ['city', 'string', 'text'],
    ['country', 'string', 'text'],
    ['numberofemployees', 'number', 'number'],
    ['hubspot_owner_id', 'enumeration', 'select'],
  ],
  deals: [
    ['dealname', 'string', 'text'],
    ['amount', 'number', 'number'],
    ['closedate', 'datetime', 'date'],
    ['dealstage', 'enumeration', 'radio'],
    ['pipeline', 'enumeration', 'select'],
    ['deal_currency_code', 'enumeration', 'select'],
    ['hubspot_owner_id', 'enumeration', 'select'],
    ['hs_is_closed', 'bool', 'booleancheckbox', READ_ONLY],
    ['hs_is_closed_won', 'bool', 'booleancheckbox', READ_ONLY],
  ],
  calls: [
    ['hs_timestamp', 'datetime', 'date'],
    ['hs_call_title', 'string', 'text'],
    ['hs_call_body', 'string', 'html'],
    ['hs_call_duration', 'number', 'number'],
    ['hs_call_direction', 'enumeration', 'select'],
    ['hs_call_status', 'enumeration', 'select'],
    ['hs_call_disposition', 'enumeration', 'select'],
    ['hs_call_from_number', 'string', 'text'],
    ['hs_call_to_number', 'string', 'text'],
    ['hs_call_recording_url', 'string', 'text'],
    ['hubspot_owner_id', 'enumeration', 'select'],
  ],
  notes: [
    ['hs_timestamp', 'datetime', 'date'],
    ['hs_note_body', 'string', 'html'],
    ['hubspot_owner_id', 'enumeration', 'select'],
  ],
  tasks: [
    ['hs_timestamp', 'datetime', 'date'],
    ['hs_task_subject', 'string', 'text'],
    ['hs_task_body', 'string', 'html'],
    ['hs_task_status', 'enumeration', 'select'],
    ['hs_task_priority', 'enumeration', 'select'],
    ['hs_task_type', 'enumeration', 'select'],
    ['hubspot_owner_id', 'enumeration', 'select'],
  ],
};

const UNIQUE = { hasUniqueValue: true };

/** The custom properties crm-sync's default mapping needs (group `crmsync`). */
export const CRMSYNC_PROPERTIES: Partial<Record<ObjectType, Spec[]>> = {
  calls: [
    ['crmsync_call_id', 'string', 'text', UNIQUE],
    ['crmsync_score_overall', 'number', 'number'],
    ['crmsync_score_rapport', 'number', 'number'],
    ['crmsync_score_discovery', 'number', 'number'],
    ['crmsync_score_objection_handling', 'number', 'number'],
    ['crmsync_score_closing', 'number', 'number'],
    ['crmsync_objections_detected', 'number', 'number'],
    ['crmsync_objections_handled', 'number', 'number'],
    // Stamped before follow-ups are asked for (src/mapping/writeback.ts).
    ['crmsync_followups_generated_at', 'datetime', 'date'],
  ],
  // Deal-level signals (the mappings' `deal` section).
  deals: [
    ['crmsync_last_call_date', 'date', 'date'],
    ['crmsync_last_call_score', 'number', 'number'],
    ['crmsync_average_score', 'number', 'number'],
    ['crmsync_open_objections', 'number', 'number'],
    ['crmsync_last_next_step', 'string', 'text'],
  ],
  // A draft's call id: not unique, a call has several drafts.
  notes: [
    ['crmsync_followup_id', 'string', 'text', UNIQUE],
    ['crmsync_call_id', 'string', 'text'],
  ],
  tasks: [
    ['crmsync_followup_id', 'string', 'text', UNIQUE],
    ['crmsync_call_id', 'string', 'text'],
  ],
};

export function makeProperty(
  name: string,
  type: PropertyType,
  fieldType: string,
  nowIso: string,
  extra: Partial<PropertyDef> = {},
): PropertyDef {
  return {
    name,
    label: name,
    type,
    fieldType,
    groupName: 'crmsync',
    description: '',
    hasUniqueValue: false,
    hubspotDefined: false,
    readOnlyValue: false,
    options: [],
    displayOrder: -1,
    createdAt: nowIso,
    updatedAt: nowIso,
    archived: false,
    ...extra,
  };
}

/** Every object type's property map: HubSpot-defined, timestamps, and optionally crm-sync's. */
export function seedProperties(
  nowIso: string,
  withCustom: boolean,
): Record<ObjectType, Map<string, PropertyDef>> {
  const out = {} as Record<ObjectType, Map<string, PropertyDef>>;
  for (const type of OBJECT_TYPES) {
    const map = new Map<string, PropertyDef>();
    const std: Spec[] = [
      ...STANDARD[type],
      ['hs_object_id', 'number', 'number', READ_ONLY],
      ['createdate', 'datetime', 'date', READ_ONLY],
      ['hs_createdate', 'datetime', 'date', READ_ONLY],
      ['lastmodifieddate', 'datetime', 'date', READ_ONLY],
      ['hs_lastmodifieddate', 'datetime', 'date', READ_ONLY],
    ];
    for (const [name, t, ft, extra] of std) {
      const group = type === 'contacts' ? 'contactinformation' : `${type.replace(/s$/, '')}information`;
      map.set(name, makeProperty(name, t, ft, nowIso, { groupName: group, hubspotDefined: true, ...extra }));
    }
    if (withCustom) {
      for (const [name, t, ft, extra] of CRMSYNC_PROPERTIES[type] ?? []) {
        map.set(name, makeProperty(name, t, ft, nowIso, extra));
      }
    }
    out[type] = map;
  }
  return out;
}

/** Which fieldTypes HubSpot accepts for each type (properties API, "type and fieldType"). */
export const FIELD_TYPES: Record<PropertyType, string[]> = {
  string: ['text', 'textarea', 'html', 'phonenumber', 'file'],
  number: ['number', 'calculation_equation'],
  date: ['date'],
  datetime: ['date'],
  enumeration: ['select', 'radio', 'checkbox', 'booleancheckbox', 'calculation_equation'],
  bool: ['booleancheckbox', 'calculation_equation'],
};

/** A property definition as the properties API returns it. */
export function propertyView(def: PropertyDef): Record<string, unknown> {
  return {
    name: def.name,
    label: def.label,
    type: def.type,
    fieldType: def.fieldType,
    groupName: def.groupName,
    description: def.description,
    options: def.options,
    displayOrder: def.displayOrder,
    hasUniqueValue: def.hasUniqueValue,
    hidden: false,
    formField: false,
    calculated: def.readOnlyValue,
    externalOptions: false,
    hubspotDefined: def.hubspotDefined,
    modificationMetadata: {
      archivable: !def.hubspotDefined,
      readOnlyDefinition: def.hubspotDefined,
      readOnlyValue: def.readOnlyValue,
    },
    createdAt: def.createdAt,
    updatedAt: def.updatedAt,
    archived: def.archived,
  };
}
