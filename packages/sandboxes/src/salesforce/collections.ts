import { findField, type FieldDef, type ObjectDef } from './schema.js';
import { RequestError, type DmlError, type OrgStore, type SfRecord } from './store.js';

/**
 * sObject Collections take at most 200 records per request and answer 200 with a per-record
 * `{id, success, errors}` (REST API Developer Guide, "sObject Collections" and "Upsert Multiple
 * Records with Fewer Round-Trips").
 */
export const MAX_COLLECTION_RECORDS = 200;

export interface SaveResult {
  id?: string;
  success: boolean;
  errors: DmlError[];
  created?: boolean;
}

interface Planned {
  obj: ObjectDef;
  values: Record<string, unknown>;
  existing?: SfRecord | undefined;
  errors: DmlError[];
}

function readRecords(body: unknown): { records: Record<string, unknown>[]; allOrNone: boolean } {
  const b = body as { records?: unknown; allOrNone?: unknown } | null;
  if (!b || !Array.isArray(b.records)) {
    throw new RequestError(400, 'JSON_PARSER_ERROR', 'The request body must have a records array');
  }
  if (b.records.length > MAX_COLLECTION_RECORDS) {
    throw new RequestError(
      400,
      'EXCEEDED_ID_LIMIT',
      `record limit reached. cannot submit more than ${MAX_COLLECTION_RECORDS} records into this call`,
    );
  }
  return { records: b.records as Record<string, unknown>[], allOrNone: b.allOrNone === true };
}

/** Each record names its type in `attributes.type`; missing or unknown fails the request. */
function recordType(store: OrgStore, rec: Record<string, unknown>, expected?: ObjectDef): ObjectDef {
  const type = (rec.attributes as { type?: unknown } | undefined)?.type;
  if (typeof type !== 'string') {
    throw new RequestError(400, 'INVALID_TYPE', 'Must send a concrete entity type.');
  }
  const obj = store.object(type);
  if (expected && obj !== expected) {
    throw new RequestError(400, 'INVALID_TYPE', `Records must all be of type ${expected.name}`);
  }
  return obj;
}

/**
 * Applies planned writes: with allOrNone, one failure rolls back all (the others report
 * ALL_OR_NONE_OPERATION_ROLLED_BACK); otherwise each record stands alone.
 */
function apply(
  store: OrgStore,
  plans: Planned[],
  allOrNone: boolean,
  ownerId: string,
  upsert: boolean,
): SaveResult[] {
  if (allOrNone && plans.some((p) => p.errors.length > 0)) {
    return plans.map((p) => ({
      success: false,
      errors:
        p.errors.length > 0
          ? p.errors
          : [
              {
                statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
                message:
                  'Record rolled back because not all records were valid and the request was using AllOrNone header',
                fields: [],
              },
            ],
    }));
  }
  return plans.map((p) => {
    if (p.errors.length > 0) return { success: false, errors: p.errors };
    if (p.existing) {
      store.update(p.obj, p.existing, p.values);
      return { id: p.existing.Id, success: true, errors: [], ...(upsert ? { created: false } : {}) };
    }
    const rec = store.create(p.obj, p.values, ownerId);
    return { id: rec.Id, success: true, errors: [], ...(upsert ? { created: true } : {}) };
  });
}

/** `PATCH composite/sobjects/<Type>/<ExtField>`: upsert up to 200 records on an external id. */
export function collectionUpsert(
  store: OrgStore,
  obj: ObjectDef,
  extField: string,
  body: unknown,
  ownerId: string,
): SaveResult[] {
  const extFd = externalIdField(obj, extField);
  const { records, allOrNone } = readRecords(body);
  const parsed = records.map((rec) => store.parseValues(recordType(store, rec, obj), rec));
  const keys = parsed.map((values) => {
    const v = values[extFd.name];
    return typeof v === 'string' && v !== '' ? v.toLowerCase() : undefined;
  });
  const plans = parsed.map((values, i): Planned => {
    const key = keys[i];
    if (key === undefined) {
      return { obj, values, errors: [dml('MISSING_ARGUMENT', `${extFd.name} not specified`, [extFd.name])] };
    }
    if (keys.filter((k) => k === key).length > 1) {
      const msg = `Duplicate external id specified: ${String(values[extFd.name])}`;
      return { obj, values, errors: [dml('DUPLICATE_EXTERNAL_ID', msg, [extFd.name])] };
    }
    const matches = store.matchExternal(obj, extFd, String(values[extFd.name]));
    if (matches.length > 1) {
      const ids = matches.map((m) => m.Id).join(', ');
      const msg = `${extFd.name}: more than one record found for external id field: [${ids}]`;
      return { obj, values, errors: [dml('DUPLICATE_EXTERNAL_ID', msg, [extFd.name])] };
    }
    const existing = matches[0];
    return { obj, values, existing, errors: store.validate(obj, values, existing) };
  });
  return apply(store, plans, allOrNone, ownerId, true);
}

/** `POST composite/sobjects`: create up to 200 records, possibly of several types. */
export function collectionCreate(store: OrgStore, body: unknown, ownerId: string): SaveResult[] {
  const { records, allOrNone } = readRecords(body);
  const plans = records.map((rec): Planned => {
    const obj = recordType(store, rec);
    if (rec.Id !== undefined || rec.id !== undefined) {
      return {
        obj,
        values: {},
        errors: [dml('INVALID_FIELD', 'cannot specify Id in an insert call', ['Id'])],
      };
    }
    const values = store.parseValues(obj, rec);
    return { obj, values, errors: store.validate(obj, values) };
  });
  return apply(store, plans, allOrNone, ownerId, false);
}

/**
 * `PATCH composite/sobjects`: update up to 200 records by id, each with its `attributes.type`
 * (REST API Developer Guide, "Update Records Using sObject Collections"); `rematch` moves a call
 * Task's WhoId/WhatId this way.
 */
export function collectionUpdate(store: OrgStore, body: unknown, ownerId: string): SaveResult[] {
  const { records, allOrNone } = readRecords(body);
  const plans = records.map((rec): Planned => {
    const obj = recordType(store, rec);
    const { id, Id, ...rest } = rec;
    const recId = typeof Id === 'string' ? Id : typeof id === 'string' ? id : undefined;
    const existing = recId ? store.get(obj.name, recId) : undefined;
    const values = store.parseValues(obj, rest);
    if (!existing) {
      return { obj, values, errors: [dml('INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [])] };
    }
    return { obj, values, existing, errors: store.validate(obj, values, existing) };
  });
  return apply(store, plans, allOrNone, ownerId, false);
}

export function externalIdField(obj: ObjectDef, name: string): FieldDef {
  const fd = findField(obj, name);
  if (!fd || !fd.externalId) {
    throw new RequestError(
      400,
      'INVALID_FIELD',
      fd
        ? `Field ${fd.name} is not an external id field on ${obj.name}`
        : `No such column '${name}' on sobject of type ${obj.name}`,
      [name],
    );
  }
  return fd;
}

function dml(statusCode: string, message: string, fields: string[]): DmlError {
  return { statusCode, message, fields };
}
