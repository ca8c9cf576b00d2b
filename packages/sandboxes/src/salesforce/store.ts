import type { Clock } from '../clock.js';
import { findField, isNumberType, isStringType, type FieldDef, type ObjectDef } from './schema.js';

export type SfRecord = Record<string, unknown> & { Id: string };

/** A per-record DML failure, as sObject Collections report it (`statusCode`, not `errorCode`). */
export interface DmlError {
  statusCode: string;
  message: string;
  fields: string[];
}

/** A failure of the whole request: answered as `[{message, errorCode, fields?}]` with `status`. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly fields?: string[],
  ) {
    super(message);
  }
}

/** Salesforce's REST datetime format: `2026-01-01T12:00:00.000+0000`. */
export function sfDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+0000');
}

const charLength = (s: string): number => [...s].length;

/**
 * An admin's rule that a field be filled on create: `rule` is a validation rule (formula
 * `ISNEW() && ISBLANK(field)`, error shown at the field: FIELD_CUSTOM_VALIDATION_EXCEPTION with the
 * rule's message and `fields: [field]`), `required` a field made required (REQUIRED_FIELD_MISSING).
 * REST API Developer Guide, "Status Codes and Error Responses"; sObject Collections list them per
 * record in `errors[]`.
 */
export interface ValidationRule {
  object: string;
  field: string;
  kind: 'rule' | 'required';
  message?: string | undefined;
}

/** The org's records in memory, with the validation Salesforce applies on create and update. */
export class OrgStore {
  private records = new Map<string, Map<string, SfRecord>>();
  validationRules: ValidationRule[] = [];

  constructor(
    readonly schema: Map<string, ObjectDef>,
    private readonly clock: Clock,
    private readonly newId: (keyPrefix: string) => string,
  ) {
    for (const obj of schema.values()) this.records.set(obj.name, new Map());
  }

  object(type: string): ObjectDef {
    const obj = this.schema.get(type.toLowerCase());
    if (!obj) throw new RequestError(404, 'NOT_FOUND', 'The requested resource does not exist');
    return obj;
  }

  all(type: string): SfRecord[] {
    return [...(this.records.get(this.object(type).name)?.values() ?? [])];
  }

  get(type: string, id: string): SfRecord | undefined {
    return this.records.get(this.object(type).name)?.get(id);
  }

  /** Finds a record of any type by id (the key prefix names its type). */
  findById(id: string): { obj: ObjectDef; rec: SfRecord } | undefined {
    for (const obj of this.schema.values()) {
      if (!id.startsWith(obj.keyPrefix)) continue;
      const rec = this.records.get(obj.name)?.get(id);
      if (rec) return { obj, rec };
    }
    return undefined;
  }

  /** Stores a record as given (seed data, admin inserts): no validation, derived fields filled. */
  insertRaw(type: string, values: Record<string, unknown>): SfRecord {
    const obj = this.object(type);
    const now = sfDateTime(this.clock.now());
    const rec: SfRecord = {
      Id: this.newId(obj.keyPrefix),
      CreatedDate: now,
      LastModifiedDate: now,
      ...values,
    };
    this.derive(obj, rec);
    this.records.get(obj.name)!.set(rec.Id, rec);
    return rec;
  }

  /**
   * Turns a JSON body into canonical field names, refusing what Salesforce refuses while reading
   * the request (unknown field, wrong JSON type): those fail the whole request, not one record.
   */
  parseValues(obj: ObjectDef, body: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (key === 'attributes') continue;
      const fd = findField(obj, key);
      if (!fd) {
        throw new RequestError(
          400,
          'INVALID_FIELD',
          `No such column '${key}' on sobject of type ${obj.name}`,
          [key],
        );
      }
      out[fd.name] = coerce(fd, value);
    }
    return out;
  }

  /** Checks a create (no `existing`) or an update; returns every per-record error found. */
  validate(obj: ObjectDef, values: Record<string, unknown>, existing?: SfRecord): DmlError[] {
    const errors: DmlError[] = [];
    for (const [name, value] of Object.entries(values)) {
      const fd = findField(obj, name)!;
      if (existing ? !fd.updateable : !fd.createable) {
        errors.push({
          statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
          message: `Unable to create/update fields: ${fd.name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
          fields: [fd.name],
        });
        continue;
      }
      if (value === null) continue;
      const err = this.checkValue(obj, fd, value, existing?.Id);
      if (err) errors.push(err);
    }
    const merged = { ...(existing ?? {}), ...values };
    const missing = obj.fields
      .filter((fd) => fd.required && fd.defaultValue === undefined)
      .filter((fd) => merged[fd.name] === undefined || merged[fd.name] === null || merged[fd.name] === '')
      .map((fd) => fd.name);
    const blank = (name: string) =>
      merged[name] === undefined || merged[name] === null || merged[name] === '';
    for (const rule of existing ? [] : this.validationRules) {
      if (rule.object.toLowerCase() !== obj.name.toLowerCase() || !blank(rule.field)) continue;
      if (rule.kind === 'required') missing.push(rule.field);
      else {
        const message = rule.message ?? `${rule.field} is required when logging a ${obj.name}`;
        errors.push({ statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message, fields: [rule.field] });
      }
    }
    if (missing.length > 0) {
      errors.push({
        statusCode: 'REQUIRED_FIELD_MISSING',
        message: `Required fields are missing: [${missing.join(', ')}]`,
        fields: missing,
      });
    }
    if (
      obj.name === 'Task' &&
      typeof merged.WhoId === 'string' &&
      merged.WhoId.startsWith('00Q') &&
      merged.WhatId
    ) {
      // A task on a lead cannot also be related to an account or opportunity.
      errors.push({
        statusCode: 'FIELD_INTEGRITY_EXCEPTION',
        message: 'Related To ID: a task whose Name is a lead cannot be related to another record',
        fields: ['WhatId'],
      });
    }
    return errors;
  }

  private checkValue(obj: ObjectDef, fd: FieldDef, value: unknown, selfId?: string): DmlError | undefined {
    if (isStringType(fd.type) && typeof value === 'string') {
      if (charLength(value) > fd.length) {
        return {
          statusCode: 'STRING_TOO_LONG',
          message: `${fd.label}: data value too large: ${value.slice(0, 40)}... (max length=${fd.length})`,
          fields: [fd.name],
        };
      }
      if (fd.picklistValues && !fd.picklistValues.includes(value)) {
        return {
          statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
          message: `${fd.label}: bad value for restricted picklist field: ${value}`,
          fields: [fd.name],
        };
      }
    }
    if (fd.type === 'reference' && typeof value === 'string') {
      const target = this.findById(value);
      if (!target) {
        return {
          statusCode: 'INVALID_CROSS_REFERENCE_KEY',
          message: 'invalid cross reference id',
          fields: [fd.name],
        };
      }
      if (!fd.referenceTo.includes(target.obj.name)) {
        return {
          statusCode: 'FIELD_INTEGRITY_EXCEPTION',
          message: `${fd.label}: id value of incorrect type: ${value}`,
          fields: [fd.name],
        };
      }
    }
    if (fd.unique && typeof value === 'string') {
      const clash = this.all(obj.name).find(
        (r) => r.Id !== selfId && typeof r[fd.name] === 'string' && eqi(r[fd.name] as string, value),
      );
      if (clash) {
        return {
          statusCode: 'DUPLICATE_VALUE',
          message: `duplicate value found: ${fd.name} duplicates value on record with id: ${clash.Id}`,
          fields: [fd.name],
        };
      }
    }
    return undefined;
  }

  create(obj: ObjectDef, values: Record<string, unknown>, ownerId: string): SfRecord {
    const now = sfDateTime(this.clock.now());
    const rec: SfRecord = { Id: this.newId(obj.keyPrefix), CreatedDate: now, LastModifiedDate: now };
    for (const fd of obj.fields) {
      if (fd.defaultValue !== undefined) rec[fd.name] = fd.defaultValue;
      else if (fd.type === 'boolean' && fd.createable) rec[fd.name] = false;
    }
    if (findField(obj, 'OwnerId')) rec.OwnerId = ownerId;
    Object.assign(rec, values);
    this.derive(obj, rec);
    this.records.get(obj.name)!.set(rec.Id, rec);
    return rec;
  }

  update(obj: ObjectDef, rec: SfRecord, values: Record<string, unknown>): void {
    Object.assign(rec, values, { LastModifiedDate: sfDateTime(this.clock.now()) });
    this.derive(obj, rec);
  }

  /** Records whose external-id field equals `value`; Salesforce matches text ids case-insensitively. */
  matchExternal(obj: ObjectDef, fd: FieldDef, value: string): SfRecord[] {
    return this.all(obj.name).filter(
      (r) => typeof r[fd.name] === 'string' && eqi(r[fd.name] as string, value),
    );
  }

  private derive(obj: ObjectDef, rec: SfRecord): void {
    if (findField(obj, 'Name') && !findField(obj, 'Name')!.createable) {
      rec.Name = [rec.FirstName, rec.LastName].filter(Boolean).join(' ');
    }
    if (obj.name === 'Opportunity') {
      const stage = String(rec.StageName ?? '');
      rec.IsClosed = stage.startsWith('Closed');
      rec.IsWon = stage === 'Closed Won';
    }
    if (obj.name === 'Task') {
      rec.IsClosed = rec.Status === 'Completed';
      rec.AccountId = this.accountOf(rec.WhatId) ?? this.accountOf(rec.WhoId) ?? null;
    }
  }

  private accountOf(id: unknown): string | undefined {
    if (typeof id !== 'string') return undefined;
    const found = this.findById(id);
    if (!found) return undefined;
    if (found.obj.name === 'Account') return found.rec.Id;
    const accountId = found.rec.AccountId;
    return typeof accountId === 'string' ? accountId : undefined;
  }
}

export function eqi(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** JSON value to the field's type, or a request-level JSON_PARSER_ERROR as Salesforce answers. */
function coerce(fd: FieldDef, value: unknown): unknown {
  if (value === null) return null;
  const bad = (): never => {
    throw new RequestError(
      400,
      'JSON_PARSER_ERROR',
      `Cannot deserialize instance of ${fd.type} from ${JSON.stringify(value)} for field ${fd.name}`,
      [fd.name],
    );
  };
  if (isNumberType(fd.type)) {
    const n =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && value.trim() !== ''
          ? Number(value)
          : NaN;
    if (!Number.isFinite(n) || (fd.type === 'int' && !Number.isInteger(n))) return bad();
    return n;
  }
  if (fd.type === 'boolean') return typeof value === 'boolean' ? value : bad();
  if (typeof value !== 'string') return bad();
  if (fd.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) return bad();
  if (fd.type === 'datetime') {
    const ms = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    return Number.isNaN(ms) ? bad() : sfDateTime(ms);
  }
  return value;
}
