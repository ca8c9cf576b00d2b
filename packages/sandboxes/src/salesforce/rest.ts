import { collectionCreate, collectionUpdate, collectionUpsert, externalIdField } from './collections.js';
import { runQuery } from './query.js';
import { describeObject } from './schema.js';
import { parseSoql, SoqlSyntaxError } from './soql.js';
import type { SalesforceSandboxState } from './state.js';
import { RequestError, type SfRecord } from './store.js';

export interface RestRequest {
  method: string;
  /** Path segments after `/services/data/vXX.X/`. */
  parts: string[];
  query: URLSearchParams;
  body: unknown;
  userId: string;
  /** `/services/data/vXX.X`, for relative URLs in answers. */
  apiPath: string;
  todayIso: string;
}

export interface RestResponse {
  status: number;
  body?: unknown;
}

const notFound = (): never => {
  throw new RequestError(404, 'NOT_FOUND', 'The requested resource does not exist');
};

/** Routes one `/services/data/vXX.X/…` request; request-level failures are thrown as RequestError. */
export function handleRest(state: SalesforceSandboxState, req: RestRequest): RestResponse {
  const { method, parts } = req;
  const [head, a, b, c] = parts;
  if (head === 'query' && method === 'GET')
    return a === undefined ? query(state, req) : queryMore(state, req, a);
  if (head === 'limits' && method === 'GET' && a === undefined) return { status: 200, body: limits(state) };
  if (head === 'sobjects' && a !== undefined) return sobjects(state, req, a, b, c, parts.length);
  if (head === 'composite' && a === 'sobjects') {
    const store = state.store;
    if (method === 'PATCH' && b !== undefined && c !== undefined && parts.length === 4) {
      return { status: 200, body: collectionUpsert(store, store.object(b), c, req.body, req.userId) };
    }
    if (method === 'POST' && parts.length === 2)
      return { status: 200, body: collectionCreate(store, req.body, req.userId) };
    if (method === 'PATCH' && parts.length === 2)
      return { status: 200, body: collectionUpdate(store, req.body, req.userId) };
  }
  return notFound();
}

function query(state: SalesforceSandboxState, req: RestRequest): RestResponse {
  const soql = req.query.get('q');
  if (!soql) throw new RequestError(400, 'MALFORMED_QUERY', 'A query string must be provided');
  let parsed;
  try {
    parsed = parseSoql(soql, req.todayIso);
  } catch (err) {
    if (err instanceof SoqlSyntaxError)
      throw new RequestError(400, 'MALFORMED_QUERY', `${soql}\n${err.message}`);
    throw err;
  }
  const rows = runQuery(state.store, parsed, req.apiPath);
  return { status: 200, body: page(state, req, rows, 0) };
}

/** Answers one page; the rest waits under a locator, fetched by `GET query/<locator>-<offset>`. */
function page(
  state: SalesforceSandboxState,
  req: RestRequest,
  rows: Record<string, unknown>[],
  offset: number,
  locator = state.newLocator(),
): Record<string, unknown> {
  const totalSize = rows.length;
  const end = offset + state.queryBatchSize;
  if (end >= rows.length) {
    state.locators.delete(locator);
    return { totalSize, done: true, records: rows.slice(offset) };
  }
  state.locators.set(locator, rows);
  return {
    totalSize,
    done: false,
    // More rows than a page: `done: false` and a nextRecordsUrl to the rest (REST API Developer
    // Guide, "Execute a SOQL Query").
    nextRecordsUrl: `${req.apiPath}/query/${locator}-${end}`,
    records: rows.slice(offset, end),
  };
}

function queryMore(state: SalesforceSandboxState, req: RestRequest, locatorAndOffset: string): RestResponse {
  const m = /^(.+)-(\d+)$/.exec(locatorAndOffset);
  const rows = m ? state.locators.get(m[1]!) : undefined;
  if (!m || !rows) throw new RequestError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
  return { status: 200, body: page(state, req, rows, Number(m[2]), m[1]) };
}

function limits(state: SalesforceSandboxState): Record<string, unknown> {
  return {
    DailyApiRequests: { Max: state.apiLimit, Remaining: Math.max(0, state.apiLimit - state.apiUsed) },
    DailyBulkApiBatches: { Max: 15000, Remaining: 15000 },
    DataStorageMB: { Max: 5, Remaining: 5 },
  };
}

function sobjects(
  state: SalesforceSandboxState,
  req: RestRequest,
  type: string,
  second: string | undefined,
  third: string | undefined,
  length: number,
): RestResponse {
  const store = state.store;
  const obj = store.object(type);
  const { method } = req;
  if (second === 'describe' && length === 3 && method === 'GET') {
    return { status: 200, body: describeObject(obj, req.apiPath) };
  }
  if (second === undefined && method === 'POST') {
    const values = store.parseValues(obj, req.body as Record<string, unknown>);
    dmlFailure(store.validate(obj, values));
    const rec = store.create(obj, values, req.userId);
    return { status: 201, body: { id: rec.Id, success: true, errors: [] } };
  }
  if (second !== undefined && length === 3) {
    const rec = store.get(obj.name, second) ?? notFound();
    if (method === 'GET') return { status: 200, body: asRecord(rec, obj.name, req, req.query.get('fields')) };
    if (method === 'PATCH') {
      const values = store.parseValues(obj, req.body as Record<string, unknown>);
      dmlFailure(store.validate(obj, values, rec));
      store.update(obj, rec, values);
      return { status: 204 };
    }
  }
  if (second !== undefined && third !== undefined && length === 4) {
    const extFd = externalIdField(obj, second);
    const matches = store.matchExternal(obj, extFd, third);
    if (matches.length > 1) {
      // Several records share the external id: 300 with their URLs, nothing written (REST API
      // Developer Guide, "Status Codes and Error Responses"; upsert answers 201 created, 204 updated).
      return { status: 300, body: matches.map((m) => `${req.apiPath}/sobjects/${obj.name}/${m.Id}`) };
    }
    const existing = matches[0];
    if (method === 'GET') return { status: 200, body: asRecord(existing ?? notFound(), obj.name, req, null) };
    if (method === 'PATCH') {
      const values = { ...store.parseValues(obj, req.body as Record<string, unknown>), [extFd.name]: third };
      dmlFailure(store.validate(obj, values, existing));
      if (existing) {
        store.update(obj, existing, values);
        return { status: 204 };
      }
      const rec = store.create(obj, values, req.userId);
      return { status: 201, body: { id: rec.Id, success: true, errors: [], created: true } };
    }
  }
  return notFound();
}

/** A single-record write that fails answers 400 with the errors as an array. */
function dmlFailure(errors: { statusCode: string; message: string; fields: string[] }[]): void {
  const first = errors[0];
  if (first) throw new RequestError(400, first.statusCode, first.message, first.fields);
}

function asRecord(
  rec: SfRecord,
  type: string,
  req: RestRequest,
  fields: string | null,
): Record<string, unknown> {
  const wanted = fields ? fields.split(',').map((f) => f.trim().toLowerCase()) : undefined;
  const out: Record<string, unknown> = {
    attributes: { type, url: `${req.apiPath}/sobjects/${type}/${rec.Id}` },
  };
  for (const [k, v] of Object.entries(rec)) {
    if (!wanted || wanted.includes(k.toLowerCase())) out[k] = v;
  }
  return out;
}
