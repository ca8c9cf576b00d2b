import { Client } from '@hubspot/api-client';
import type { RefreshFn } from './auth.js';

/**
 * The few HubSpot operations crm-sync uses, over the official `@hubspot/api-client`; each method
 * sends exactly one HTTP request, so the gate can count them. The SDK's enum-typed request models
 * are built from plain objects here, in one place.
 *
 * SDK quirk: retry and limiter decorators live in a process-wide singleton, taken from the most
 * recently constructed Client when a Client's API objects are first built (lazily). So each Client
 * is built without retries or limiter and its API objects are built at once, in the same tick.
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

type ResponseContext = { httpStatusCode: number; headers: Record<string, string> };

/** Builds a Client for one access token; `onResponse` sees the headers of every response, errors included. */
export function createHubSpotApi(
  basePath: string,
  accessToken: string,
  onResponse: (headers: Record<string, string>) => void,
): HubSpotApi {
  const client = new Client({
    accessToken,
    basePath,
    middleware: [
      {
        pre: (ctx: unknown) => ctx,
        post: (ctx: unknown) => {
          onResponse((ctx as ResponseContext).headers ?? {});
          return ctx;
        },
      },
    ],
  });
  // Built now, in the constructor's tick: see the decorator quirk above.
  const objects = client.crm.objects;
  const assoc = client.crm.associations.v4;
  const props = client.crm.properties;
  const owners = client.crm.owners;

  type Search = Parameters<typeof objects.searchApi.doSearch>[1];
  type Upsert = Parameters<typeof objects.batchApi.upsert>[1];
  type Update = Parameters<typeof objects.batchApi.update>[1];
  type AssocCreate = Parameters<typeof assoc.batchApi.create>[2];
  type AssocRead = Parameters<typeof assoc.batchApi.getPage>[2];
  type AssocArchive = Parameters<typeof assoc.batchApi.archive>[2];
  type PropCreate = Parameters<typeof props.batchApi.create>[1];

  const errorsOf = (r: unknown): BatchError[] =>
    ((r as { errors?: BatchError[] }).errors ?? []).map(plainError);

  return {
    async search(type, body) {
      const r = await objects.searchApi.doSearch(type, body as unknown as Search);
      return {
        total: r.total,
        results: r.results.map(plain),
        ...(r.paging?.next ? { after: r.paging.next.after } : {}),
      };
    },
    async getById(type, id, properties) {
      return plain(await objects.basicApi.getById(type, id, properties));
    },
    async batchRead(type, ids, properties) {
      const r = await objects.batchApi.read(type, {
        inputs: ids.map((id) => ({ id })),
        properties,
        propertiesWithHistory: [],
      });
      return { results: r.results.map(plain), errors: errorsOf(r) };
    },
    async batchUpsert(type, inputs) {
      const r = await objects.batchApi.upsert(type, { inputs } as unknown as Upsert);
      // The SDK renames the wire field `new` to `_new` (wire notes 1.3).
      return {
        results: r.results.map((o) => ({ ...plain(o), created: o._new === true })),
        errors: errorsOf(r),
      };
    },
    async batchUpdate(type, inputs) {
      const r = await objects.batchApi.update(type, { inputs } as unknown as Update);
      return { results: r.results.map(plain), errors: errorsOf(r) };
    },
    async associationPage(from, id, to, after) {
      const r = await assoc.basicApi.getPage(from, id, to, after, 500);
      return {
        results: r.results.map((a) => ({
          toId: String(a.toObjectId),
          typeIds: a.associationTypes.map((t) => t.typeId),
        })),
        ...(r.paging?.next?.after ? { after: r.paging.next.after } : {}),
      };
    },
    async associationBatch(from, to, inputs) {
      const body = { inputs: inputs.map((i) => (i.after ? { id: i.id, after: i.after } : { id: i.id })) };
      const r = await assoc.batchApi.getPage(from, to, body as AssocRead);
      return {
        results: r.results.map((x) => ({
          fromId: String(x._from.id), // `from` on the wire
          to: x.to.map((t) => ({
            toId: String(t.toObjectId),
            typeIds: t.associationTypes.map((a) => a.typeId),
          })),
          ...(x.paging?.next?.after ? { after: x.paging.next.after } : {}),
        })),
        errors: errorsOf(r),
      };
    },
    async associateBatch(from, to, inputs) {
      const body = {
        inputs: inputs.map((i) => ({
          _from: { id: i.fromId }, // sent as `from` on the wire
          to: { id: i.toId },
          types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: i.typeId }],
        })),
      };
      return { errors: errorsOf(await assoc.batchApi.create(from, to, body as unknown as AssocCreate)) };
    },
    async archiveAssociations(from, to, inputs) {
      const body = {
        inputs: inputs.map((i) => ({ _from: { id: i.fromId }, to: i.toIds.map((id) => ({ id })) })),
      };
      await assoc.batchApi.archive(from, to, body as unknown as AssocArchive);
    },
    async listProperties(type) {
      const r = await props.coreApi.getAll(type);
      return r.results.map((p) => ({
        name: p.name,
        type: String(p.type),
        fieldType: String(p.fieldType),
        hasUniqueValue: p.hasUniqueValue === true,
      }));
    },
    async createGroup(type, name, label) {
      await props.groupsApi.create(type, { name, label, displayOrder: -1 });
    },
    async createProperties(type, inputs) {
      const r = await props.batchApi.create(type, { inputs } as unknown as PropCreate);
      return { created: r.results.map((p) => p.name), errors: errorsOf(r) };
    },
    async owner(id) {
      return ownerInfo(await owners.ownersApi.getById(Number(id), 'id', false));
    },
    async ownerPage(after, limit) {
      const r = await owners.ownersApi.getPage(undefined, after, limit, false);
      return {
        results: r.results.map(ownerInfo),
        ...(r.paging?.next?.after ? { after: r.paging.next.after } : {}),
      };
    },
  };
}

/** The OAuth token call: form-encoded `POST /oauth/v1/token`, no Authorization header. */
export function createTokenRefresher(basePath: string): RefreshFn {
  return async ({ clientId, clientSecret, refreshToken }) => {
    const client = new Client({ basePath });
    const tokens = client.oauth.tokensApi;
    const r = await tokens.create(
      'refresh_token',
      undefined,
      undefined,
      clientId,
      clientSecret,
      refreshToken,
    );
    return { accessToken: r.accessToken, refreshToken: r.refreshToken, expiresInSec: r.expiresIn };
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
