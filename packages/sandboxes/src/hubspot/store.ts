import type { Clock } from '../clock.js';
import { httpError, propertyValuesError, type Problem, type PropertyProblem } from './errors.js';
import {
  DEFAULT_PROPERTIES,
  MAX_STRING_LENGTH,
  OBJECT_TYPES,
  REQUIRED_ON_CREATE,
  timestampProps,
  type AssociationRow,
  type ObjectType,
  type PropertyDef,
  type PropertyGroup,
  type StoredObject,
} from './model.js';
import { seedProperties } from './properties.js';

export interface Owner {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  userId: number;
}

/** The sandbox's portal: objects, property definitions, associations and owners, in memory. */
export class HubSpotStore {
  objects = {} as Record<ObjectType, Map<string, StoredObject>>;
  properties = {} as Record<ObjectType, Map<string, PropertyDef>>;
  groups = {} as Record<ObjectType, Map<string, PropertyGroup>>;
  associations: AssociationRow[] = [];
  owners = new Map<string, Owner>();
  /**
   * Properties the portal's admin made required on create (the "Create record" form's required
   * fields), enforced on API writes from 2026-09 ("CRM API Write Validation Enforcement", HubSpot
   * developer changelog 2026-08-11): a create without one is refused with 400 VALIDATION_ERROR.
   */
  requiredOnCreate = new Map<ObjectType, Set<string>>();
  private lastId = 1000;

  constructor(private readonly clock: Clock) {
    this.clear(true);
  }

  clear(withCustomProperties: boolean): void {
    const now = this.nowIso();
    this.properties = seedProperties(now, withCustomProperties);
    for (const type of OBJECT_TYPES) {
      this.objects[type] = new Map();
      const groups = new Map<string, PropertyGroup>();
      if (withCustomProperties)
        groups.set('crmsync', { name: 'crmsync', label: 'crm-sync', displayOrder: -1, archived: false });
      this.groups[type] = groups;
    }
    this.associations = [];
    this.owners.clear();
    this.lastId = 1000;
  }

  nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  nextId(): string {
    this.lastId += 1;
    return String(this.lastId);
  }

  /** By record id, or by a unique property (`idProperty`; email matches case-insensitively). */
  get(type: ObjectType, id: string, idProperty?: string): StoredObject | undefined {
    if (!idProperty || idProperty === 'hs_object_id') {
      const obj = this.objects[type].get(id);
      return obj && !obj.archived ? obj : undefined;
    }
    return this.findByProperty(type, idProperty, id);
  }

  findByProperty(type: ObjectType, name: string, value: string): StoredObject | undefined {
    const wanted = name === 'email' ? value.toLowerCase() : value;
    for (const obj of this.objects[type].values()) {
      if (obj.archived) continue;
      const have = obj.properties[name];
      if (have !== undefined && (name === 'email' ? have.toLowerCase() : have) === wanted) return obj;
    }
    return undefined;
  }

  /** Checks values against the definitions; `selfId` is the object being updated, if any. */
  check(
    type: ObjectType,
    props: Record<string, unknown>,
    creating: boolean,
    selfId?: string,
  ): Problem | null {
    const defs = this.properties[type];
    const problems: PropertyProblem[] = [];
    for (const [name, raw] of Object.entries(props)) {
      const def = defs.get(name);
      if (!def) {
        problems.push({ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` });
        continue;
      }
      const value = raw === null || raw === undefined ? '' : String(raw);
      const problem = valueProblem(def, value);
      if (problem) problems.push({ name, ...problem });
    }
    if (creating) {
      for (const name of REQUIRED_ON_CREATE[type] ?? []) {
        if (props[name] === undefined || props[name] === '') {
          problems.push({ name, error: 'REQUIRED_PROPERTY', message: `Property "${name}" is required` });
        }
      }
      for (const name of this.requiredOnCreate.get(type) ?? []) {
        if (props[name] === undefined || props[name] === null || props[name] === '') {
          const message = `Property "${name}" is required to create a ${type.replace(/s$/, '')} in this portal`;
          problems.push({ name, error: 'REQUIRED_PROPERTY', message });
        }
      }
    }
    if (problems.length > 0) return { kind: 'invalid', problems };
    for (const [name, raw] of Object.entries(props)) {
      const def = defs.get(name);
      if (!def?.hasUniqueValue || raw === '' || raw === null) continue;
      const other = this.findByProperty(type, name, String(raw));
      if (other && other.id !== selfId) {
        const message = `${name} already has that value on ${type.replace(/s$/, '')} ${other.id}`;
        return {
          kind: 'conflict',
          error: httpError(409, 'CONFLICT', message, {
            errors: [{ message, code: 'DUPLICATE_UNIQUE_PROPERTY_VALUE', context: { propertyName: [name] } }],
          }),
        };
      }
    }
    return null;
  }

  /** Throws the HubSpot error for the first problem. */
  assertValid(type: ObjectType, props: Record<string, unknown>, creating: boolean, selfId?: string): void {
    const problem = this.check(type, props, creating, selfId);
    if (problem?.kind === 'invalid') throw propertyValuesError(problem.problems);
    if (problem?.kind === 'conflict') throw problem.error;
  }

  create(type: ObjectType, props: Record<string, unknown>): StoredObject {
    const now = this.nowIso();
    const id = this.nextId();
    const ts = timestampProps(type);
    const obj: StoredObject = { id, properties: {}, createdAt: now, updatedAt: now, archived: false };
    obj.properties[ts.created] = now;
    this.write(type, obj, props);
    obj.properties.hs_object_id = id;
    this.objects[type].set(id, obj);
    return obj;
  }

  update(type: ObjectType, obj: StoredObject, props: Record<string, unknown>): StoredObject {
    this.write(type, obj, props);
    return obj;
  }

  private write(type: ObjectType, obj: StoredObject, props: Record<string, unknown>): void {
    for (const [name, raw] of Object.entries(props)) {
      const value = raw === null || raw === undefined ? '' : String(raw);
      if (value === '') delete obj.properties[name];
      else obj.properties[name] = name === 'email' ? value.toLowerCase() : value;
    }
    if (type === 'deals') {
      const stage = obj.properties.dealstage ?? '';
      obj.properties.hs_is_closed = String(stage === 'closedwon' || stage === 'closedlost');
      obj.properties.hs_is_closed_won = String(stage === 'closedwon');
    }
    // Seeds may set the modified time themselves (to order deals); live writes take the clock.
    const ts = timestampProps(type);
    const stamp = typeof props[ts.modified] === 'string' ? String(props[ts.modified]) : this.nowIso();
    obj.properties[ts.modified] = stamp;
    obj.updatedAt = stamp;
  }

  /** The object as the API returns it, with the requested (or default) properties. */
  view(type: ObjectType, obj: StoredObject, requested?: string[]): Record<string, unknown> {
    const ts = timestampProps(type);
    const names = new Set(requested && requested.length > 0 ? requested : DEFAULT_PROPERTIES[type]);
    for (const always of ['hs_object_id', ts.created, ts.modified]) names.add(always);
    const properties: Record<string, string | null> = {};
    for (const name of names) {
      if (!this.properties[type].has(name)) continue; // unknown names are ignored on read
      properties[name] = obj.properties[name] ?? null;
    }
    return {
      id: obj.id,
      properties,
      createdAt: obj.createdAt,
      updatedAt: obj.updatedAt,
      archived: obj.archived,
    };
  }

  /** Adds the association both ways; returns false when it already existed. */
  associate(
    fromType: ObjectType,
    fromId: string,
    toType: ObjectType,
    toId: string,
    typeId: number,
    inverse: number,
  ) {
    const exists = this.associations.some(
      (a) =>
        a.fromType === fromType &&
        a.fromId === fromId &&
        a.toType === toType &&
        a.toId === toId &&
        a.typeId === typeId,
    );
    if (exists) return false;
    this.associations.push({ fromType, fromId, toType, toId, typeId });
    this.associations.push({
      fromType: toType,
      fromId: toId,
      toType: fromType,
      toId: fromId,
      typeId: inverse,
    });
    return true;
  }

  /** Removes every association (all type ids) between two records, both ways; false when there was none. */
  dissociate(fromType: ObjectType, fromId: string, toType: ObjectType, toId: string): boolean {
    const linking = (a: AssociationRow) =>
      (a.fromType === fromType && a.fromId === fromId && a.toType === toType && a.toId === toId) ||
      (a.fromType === toType && a.fromId === toId && a.toType === fromType && a.toId === fromId);
    const before = this.associations.length;
    this.associations = this.associations.filter((a) => !linking(a));
    return this.associations.length !== before;
  }

  /** The records of `toType` associated with one record, each with every type id linking them. */
  associated(
    fromType: ObjectType,
    fromId: string,
    toType: ObjectType,
  ): { toId: string; typeIds: number[] }[] {
    const byId = new Map<string, number[]>();
    for (const a of this.associations) {
      if (a.fromType !== fromType || a.fromId !== fromId || a.toType !== toType) continue;
      if (!this.objects[toType].get(a.toId) || this.objects[toType].get(a.toId)?.archived) continue;
      byId.set(a.toId, [...(byId.get(a.toId) ?? []), a.typeId]);
    }
    return [...byId.entries()]
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([toId, typeIds]) => ({ toId, typeIds }));
  }
}

function valueProblem(def: PropertyDef, value: string): { error: string; message: string } | null {
  if (def.readOnlyValue) {
    return {
      error: 'READ_ONLY_VALUE',
      message: `${def.name} is a read only property; its value cannot be set.`,
    };
  }
  if (value === '') return null;
  if (def.type === 'number' && !Number.isFinite(Number(value))) {
    return { error: 'INVALID_FLOAT', message: `${value} was not a valid number.` };
  }
  if (def.type === 'bool' && value !== 'true' && value !== 'false') {
    return { error: 'INVALID_BOOLEAN', message: `${value} was not a valid boolean.` };
  }
  if (
    (def.type === 'datetime' || def.type === 'date') &&
    !/^\d+$/.test(value) &&
    Number.isNaN(Date.parse(value))
  ) {
    return { error: 'INVALID_DATE', message: `${value} was not a valid date.` };
  }
  if (def.type === 'string' && value.length > MAX_STRING_LENGTH) {
    return {
      error: 'INVALID_LENGTH',
      message: `${def.name} is ${value.length} characters long; the maximum is ${MAX_STRING_LENGTH}.`,
    };
  }
  return null;
}
