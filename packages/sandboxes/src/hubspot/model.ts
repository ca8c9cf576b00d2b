/**
 * The HubSpot object model the sandbox emulates: object types, their ids, the properties a read
 * returns by default, and the HUBSPOT_DEFINED association types (ids as in the SDK's
 * AssociationTypes enum, research/crm-sdk-wire.md 1.3).
 */
export const OBJECT_TYPES = ['contacts', 'companies', 'deals', 'calls', 'notes', 'tasks'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

export function isObjectType(value: string): value is ObjectType {
  return (OBJECT_TYPES as readonly string[]).includes(value);
}

/** HubSpot's objectTypeId for each type, as v4 association responses report them. */
export const OBJECT_TYPE_IDS: Record<ObjectType, string> = {
  contacts: '0-1',
  companies: '0-2',
  deals: '0-3',
  calls: '0-48',
  notes: '0-46',
  tasks: '0-27',
};

/** Properties a read returns when the request names none (HubSpot docs, search "default properties"). */
export const DEFAULT_PROPERTIES: Record<ObjectType, string[]> = {
  contacts: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
  companies: ['createdate', 'domain', 'hs_lastmodifieddate', 'hs_object_id', 'name'],
  deals: [
    'amount',
    'closedate',
    'createdate',
    'dealname',
    'dealstage',
    'hs_lastmodifieddate',
    'hs_object_id',
    'pipeline',
  ],
  calls: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  notes: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  tasks: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
};

/** Contacts name their timestamps differently from every other object. */
export function timestampProps(type: ObjectType): { created: string; modified: string } {
  if (type === 'contacts') return { created: 'createdate', modified: 'lastmodifieddate' };
  if (type === 'companies' || type === 'deals')
    return { created: 'createdate', modified: 'hs_lastmodifieddate' };
  return { created: 'hs_createdate', modified: 'hs_lastmodifieddate' };
}

/** Engagements need hs_timestamp on create (HubSpot engagement docs: "required"). */
export const REQUIRED_ON_CREATE: Partial<Record<ObjectType, string[]>> = {
  calls: ['hs_timestamp'],
  notes: ['hs_timestamp'],
  tasks: ['hs_timestamp'],
};

export interface StoredObject {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

export type PropertyType = 'string' | 'number' | 'date' | 'datetime' | 'enumeration' | 'bool';

export interface PropertyDef {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  description: string;
  hasUniqueValue: boolean;
  hubspotDefined: boolean;
  /** Calculated by HubSpot (e.g. hs_is_closed): a write is rejected. */
  readOnlyValue: boolean;
  options: { label: string; value: string; displayOrder: number; hidden: boolean }[];
  displayOrder: number;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
}

export interface PropertyGroup {
  name: string;
  label: string;
  displayOrder: number;
  archived: boolean;
}

export interface AssociationRow {
  fromType: ObjectType;
  fromId: string;
  toType: ObjectType;
  toId: string;
  typeId: number;
}

/** [from, to, typeId, inverse typeId]: each pair is stored both ways, as HubSpot reports it. */
const ASSOCIATION_TYPES: [ObjectType, ObjectType, number, number][] = [
  ['contacts', 'companies', 279, 280],
  ['contacts', 'companies', 1, 2], // primary company
  ['contacts', 'deals', 4, 3],
  ['deals', 'companies', 341, 342],
  ['deals', 'companies', 5, 6], // primary company
  ['calls', 'contacts', 194, 193],
  ['calls', 'companies', 182, 181],
  ['calls', 'deals', 206, 205],
  ['notes', 'contacts', 202, 201],
  ['notes', 'companies', 190, 189],
  ['notes', 'deals', 214, 213],
  ['tasks', 'contacts', 204, 203],
  ['tasks', 'companies', 192, 191],
  ['tasks', 'deals', 216, 215],
];

/** The inverse type id when `typeId` is valid from `from` to `to`, else undefined. */
export function inverseAssociationType(from: ObjectType, to: ObjectType, typeId: number): number | undefined {
  for (const [a, b, forward, inverse] of ASSOCIATION_TYPES) {
    if (a === from && b === to && forward === typeId) return inverse;
    if (a === to && b === from && inverse === typeId) return forward;
  }
  return undefined;
}

/** The default (unlabelled) type id from `from` to `to`. */
export function defaultAssociationType(from: ObjectType, to: ObjectType): number | undefined {
  for (const [a, b, forward, inverse] of ASSOCIATION_TYPES) {
    if (forward === 1 || forward === 5) continue; // primary labels are not the default
    if (a === from && b === to) return forward;
    if (a === to && b === from) return inverse;
  }
  return undefined;
}

/** HubSpot string properties hold at most 65,536 characters. */
export const MAX_STRING_LENGTH = 65_536;

/** The target type of an association type id used from `from` (for create-with-associations). */
export function associationTarget(
  from: ObjectType,
  typeId: number,
): { to: ObjectType; inverse: number } | undefined {
  for (const [a, b, forward, inverse] of ASSOCIATION_TYPES) {
    if (a === from && forward === typeId) return { to: b, inverse };
    if (b === from && inverse === typeId) return { to: a, inverse: forward };
  }
  return undefined;
}
