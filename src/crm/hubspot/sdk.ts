import { Client } from '@hubspot/api-client';
import type { RefreshFn } from './auth.js';
import { DEFAULT_HUBSPOT_API_VERSION, hubSpotPaths } from './paths.js';
import { hubSpotRequester } from './request.js';

/**
 * The few HubSpot operations crm-sync uses, over the official `@hubspot/api-client` on HubSpot's
 * date-versioned paths (paths.ts); each method sends exactly one HTTP request, so the gate can
 * count them. Bodies are the wire shapes of the 2026-09 reference (v4 bodies for associations:
 * `from`, not the SDK's `_from`; `new` on upsert results).
 */
export interface SdkObject {
  id: string;
  properties: Record<string, string | null>;
}

export interface BatchError {
  category?: string;
  message: string;
  context?: Record<string, string[]>;
}

export interface SearchBody {
  filterGroups: {
    filters: { propertyName: string; operator: string; value?: string; values?: string[] }[];
  }[];
  properties: string[];
  sorts?: string[];
  limit: number;
  after?: string;
}

export interface UpsertInput {
  idProperty: string;
  id: string;
  properties: Record<string, string>;
}

export interface PropertyInfo {
  name: string;
  type: string;
  fieldType: string;
  hasUniqueValue: boolean;
}

export interface PropertyCreateInput {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  groupName: string;
  hasUniqueValue?: boolean;
  options?: { label: string; value: string; displayOrder: number; hidden: boolean }[];
}

export interface OwnerInfo {
  id: string;
  email?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  userId?: number | undefined;
}

export interface HubSpotApi {
  search(type: string, body: SearchBody): Promise<{ total: number; results: SdkObject[]; after?: string }>;
  getById(type: string, id: string, properties: string[]): Promise<SdkObject>;
  batchRead(
    type: string,
    ids: string[],
    properties: string[],
  ): Promise<{ results: SdkObject[]; errors: BatchError[] }>;
  batchUpsert(
    type: string,
    inputs: UpsertInput[],
  ): Promise<{ results: (SdkObject & { created: boolean })[]; errors: BatchError[] }>;
  /** Updates existing records by id (deal signals); 207 names the inputs that failed. */
  batchUpdate(
    type: string,
    inputs: { id: string; properties: Record<string, string> }[],
  ): Promise<{ results: SdkObject[]; errors: BatchError[] }>;
  associationPage(
    from: string,
    id: string,
    to: string,
    after?: string,
  ): Promise<{ results: { toId: string; typeIds: number[] }[]; after?: string }>;
  /** v4 batch read: each input's links, one page each (`after` continues an input's paging). */
  associationBatch(
    from: string,
    to: string,
    inputs: { id: string; after?: string | undefined }[],
  ): Promise<{ results: AssociationBatchResult[]; errors: BatchError[] }>;
  associateBatch(
    from: string,
    to: string,
    inputs: { fromId: string; toId: string; typeId: number }[],
  ): Promise<{ errors: BatchError[] }>;
  /**
   * v4 batch archive: removes every association between each `fromId` and its `toIds` (all type
   * ids). HubSpot answers 204 with no body, also for pairs that were not linked.
   */
  archiveAssociations(from: string, to: string, inputs: { fromId: string; toIds: string[] }[]): Promise<void>;
  listProperties(type: string): Promise<PropertyInfo[]>;
  createGroup(type: string, name: string, label: string): Promise<void>;
  createProperties(
    type: string,
    inputs: PropertyCreateInput[],
  ): Promise<{ created: string[]; errors: BatchError[] }>;
  owner(id: string): Promise<OwnerInfo>;
  /** One page of the active owners. */
  ownerPage(after: string | undefined, limit: number): Promise<{ results: OwnerInfo[]; after?: string }>;
}

export interface AssociationBatchResult {
  fromId: string;
  to: { toId: string; typeIds: number[] }[];
  /** Set when this input has more links than one page held. */
  after?: string;
}

interface Paged<T> {
  results: T[];
  paging?: { next?: { after?: string } };
}
interface Batch<T> {
  results: T[];
  errors?: BatchError[];
}
interface WireLinks {
  toObjectId: number | string;
  associationTypes: { typeId: number }[];
}
type WireObject = { id: string; properties: Record<string, string | null> };

/**
 * Builds a HubSpotApi for one access token on the date version `apiVersion` (paths.ts);
 * `onResponse` sees the headers of every response, errors included.
 */
export function createHubSpotApi(
  basePath: string,
  accessToken: string,
  onResponse: (headers: Record<string, string>) => void,
  apiVersion: string = DEFAULT_HUBSPOT_API_VERSION,
): HubSpotApi {
  // The SDK's generated APIs only know /crm/v3 and /crm/v4, so every call goes through its generic
  // apiRequest. It applies the process-wide retry/limiter decorators of the last Client built;
  // crm-sync builds none with either (the gate and the runner retry), so none apply.
  const request = hubSpotRequester(new Client({ accessToken, basePath }), onResponse);
  const paths = hubSpotPaths(apiVersion);
  const errorsOf = (r: { errors?: BatchError[] }): BatchError[] => (r.errors ?? []).map(plainError);
  const after = (r: Pick<Paged<unknown>, 'paging'>) =>
    r.paging?.next?.after ? { after: r.paging.next.after } : {};
  const links = (l: WireLinks[]) =>
    l.map((a) => ({ toId: String(a.toObjectId), typeIds: a.associationTypes.map((t) => t.typeId) }));

  return {
    async search(type, body) {
      const r = await request<Paged<WireObject> & { total: number }>({
        method: 'POST',
        path: paths.objects(type, 'search'),
        body,
        ok: [200],
      });
      return { total: r.total, results: r.results.map(plain), ...after(r) };
    },
    async getById(type, id, properties) {
      const path = paths.objects(type, id);
      return plain(await request<WireObject>({ method: 'GET', path, qs: { properties }, ok: [200] }));
    },
    async batchRead(type, ids, properties) {
      const r = await request<Batch<WireObject>>({
        method: 'POST',
        path: paths.objects(type, 'batch', 'read'),
        body: { inputs: ids.map((id) => ({ id })), properties, propertiesWithHistory: [] },
        ok: [200, 207],
      });
      return { results: r.results.map(plain), errors: errorsOf(r) };
    },
    async batchUpsert(type, inputs) {
      const r = await request<Batch<WireObject & { new?: boolean }>>({
        method: 'POST',
        path: paths.objects(type, 'batch', 'upsert'),
        body: { inputs },
        ok: [200, 207],
      });
      return {
        results: r.results.map((o) => ({ ...plain(o), created: o.new === true })),
        errors: errorsOf(r),
      };
    },
    async batchUpdate(type, inputs) {
      const r = await request<Batch<WireObject>>({
        method: 'POST',
        path: paths.objects(type, 'batch', 'update'),
        body: { inputs },
        ok: [200, 207],
      });
      return { results: r.results.map(plain), errors: errorsOf(r) };
    },
    async associationPage(from, id, to, afterCursor) {
      const r = await request<Paged<WireLinks>>({
        method: 'GET',
        path: paths.objects(from, id, 'associations', to),
        qs: { limit: 500, after: afterCursor },
        ok: [200],
      });
      return { results: links(r.results), ...after(r) };
    },
    async associationBatch(from, to, inputs) {
      const r = await request<
        Batch<Pick<Paged<unknown>, 'paging'> & { from: { id: string }; to: WireLinks[] }>
      >({
        method: 'POST',
        path: paths.associationBatch(from, to, 'read'),
        body: { inputs: inputs.map((i) => (i.after ? { id: i.id, after: i.after } : { id: i.id })) },
        ok: [200, 207],
      });
      return {
        results: r.results.map((x) => ({
          fromId: String(x.from.id),
          to: links(x.to),
          ...after(x),
        })),
        errors: errorsOf(r),
      };
    },
    async associateBatch(from, to, inputs) {
      const body = {
        inputs: inputs.map((i) => ({
          from: { id: i.fromId },
          to: { id: i.toId },
          types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: i.typeId }],
        })),
      };
      const r = await request<Batch<unknown>>({
        method: 'POST',
        path: paths.associationBatch(from, to, 'create'),
        body,
        ok: [200, 201, 207],
      });
      return { errors: errorsOf(r) };
    },
    async archiveAssociations(from, to, inputs) {
      await request({
        method: 'POST',
        path: paths.associationBatch(from, to, 'archive'),
        body: { inputs: inputs.map((i) => ({ from: { id: i.fromId }, to: i.toIds.map((id) => ({ id })) })) },
        ok: [204],
      });
    },
    async listProperties(type) {
      const r = await request<Paged<PropertyInfo>>({
        method: 'GET',
        path: paths.properties(type),
        ok: [200],
      });
      return r.results.map((p) => ({
        name: p.name,
        type: String(p.type),
        fieldType: String(p.fieldType),
        hasUniqueValue: p.hasUniqueValue === true,
      }));
    },
    async createGroup(type, name, label) {
      const body = { name, label, displayOrder: -1 };
      await request({ method: 'POST', path: paths.properties(type, 'groups'), body, ok: [201] });
    },
    async createProperties(type, inputs) {
      const r = await request<Batch<{ name: string }>>({
        method: 'POST',
        path: paths.properties(type, 'batch', 'create'),
        body: { inputs },
        ok: [201, 207],
      });
      return { created: r.results.map((p) => p.name), errors: errorsOf(r) };
    },
    async owner(id) {
      const path = paths.owners(id);
      const o = await request<OwnerInfo>({
        method: 'GET',
        path,
        qs: { idProperty: 'id', archived: false },
        ok: [200],
      });
      return ownerInfo(o);
    },
    async ownerPage(afterCursor, limit) {
      const r = await request<Paged<OwnerInfo>>({
        method: 'GET',
        path: paths.owners(),
        qs: { after: afterCursor, limit, archived: false },
        ok: [200],
      });
      return { results: r.results.map(ownerInfo), ...after(r) };
    },
  };
}

/** The OAuth token call: form-encoded `POST /oauth/2026-03/token`, no Authorization header. */
export function createTokenRefresher(basePath: string): RefreshFn {
  return async ({ clientId, clientSecret, refreshToken }) => {
    const request = hubSpotRequester(new Client({ basePath }), () => {});
    const r = await request<{ access_token: string; refresh_token?: string; expires_in?: number }>({
      method: 'POST',
      path: hubSpotPaths(DEFAULT_HUBSPOT_API_VERSION).token,
      form: {
        grant_type: 'refresh_token',
        client_id: clientId,
        client_secret: clientSecret,
        refresh_token: refreshToken,
      },
      ok: [200],
    });
    return { accessToken: r.access_token, refreshToken: r.refresh_token, expiresInSec: r.expires_in };
  };
}

function plain(o: { id: string; properties: Record<string, string | null> }): SdkObject {
  return { id: String(o.id), properties: { ...o.properties } };
}

function ownerInfo(o: OwnerInfo & { id: string | number }): OwnerInfo {
  return { id: String(o.id), email: o.email, firstName: o.firstName, lastName: o.lastName, userId: o.userId };
}

function plainError(e: BatchError): BatchError {
  return {
    message: String(e.message ?? ''),
    ...(e.category ? { category: e.category } : {}),
    ...(e.context ? { context: e.context } : {}),
  };
}
