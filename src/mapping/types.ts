import type { CrmLookup, CrmName, DealRule, LookupFields } from '../crm/types.js';
import type { Expression, PropertyRef } from './expressions.js';
import type { CrmFieldType, ValueType } from './schema.js';
import type { Transform } from './transforms.js';

/** One mapped field, compiled: what to evaluate, how to shape it, and where it was written. */
export interface CompiledField {
  /** The output key: a context key (`email`) or a CRM field name (`hs_call_title`). */
  name: string;
  /** Dotted path in the file, used in every error: `writeback.activity.fields.hs_call_title`. */
  path: string;
  line: number;
  source: string;
  expr: Expression;
  properties: PropertyRef[];
  transforms: Transform[];
  type?: ValueType | undefined;
  required: boolean;
  custom?: boolean | undefined;
  crmType?: CrmFieldType | undefined;
  label?: string | undefined;
}

export interface WritebackTarget {
  /** CRM object: `calls`, `notes`, `tasks` (HubSpot) or `Task`, `EmailMessage` (Salesforce). */
  object: string;
  /** Unique external-id field holding the Service id (call id or draft id): the upsert key. */
  idField: string;
  fields: CompiledField[];
}

/** A loaded, validated mapping file with every expression compiled. */
export interface Mapping {
  file: string;
  crm: CrmName;
  dealRule: DealRule;
  /** Properties the admin asked to read in addition to those the expressions name. */
  extraLookupFields: Partial<LookupFields>;
  context: {
    contact: CompiledField[];
    company: CompiledField[];
    deals: CompiledField[];
    custom: CompiledField[];
  };
  writeback: {
    activity: WritebackTarget;
    followups: (WritebackTarget & { kind: 'note' | 'task' | 'email' }) | null;
  };
  /** Deal-level signals (the file's `deal` section); null when the file has none. */
  deal: DealTarget | null;
}

/** The `deal` section, compiled: fields over a deal's calls, written on the deal itself. */
export interface DealTarget {
  enabled: boolean;
  /** HubSpot `deals`, Salesforce `Opportunity`. */
  object: string;
  /** How many of the newest scored calls `signals.average_score` covers. */
  averageOf: number;
  fields: CompiledField[];
}

/**
 * What the engine needs of a Service call, analysis and draft. Kept structural and minimal so
 * the Service client's own (lenient) types fit; expressions see the whole object as given.
 */
export interface CallInput {
  id: string;
  created_at?: string | null | undefined;
  participant?: {
    email?: string | null | undefined;
    name?: string | null | undefined;
    company?: string | null | undefined;
  } | null;
}

export interface FollowupDraftInput {
  id: string;
}

/** `POST /v1/calls/:id/context` body (CONTRACT.md). At most 64 KiB. */
export interface ContextBody {
  source: CrmName;
  contact: Record<string, unknown>;
  company: Record<string, unknown>;
  deals: Record<string, unknown>[];
  custom: Record<string, unknown>;
}

export interface ContextInput {
  call: CallInput;
  lookup: CrmLookup;
  /** Epoch ms for JSONata's $now()/$millis(); the real time when absent. */
  now?: number | undefined;
  /** Collects a warning for each optional field that failed and was left out. */
  warnings?: string[] | undefined;
}

export interface WritebackInput {
  call: CallInput;
  /** The call's analysis; null when there is none yet. */
  analysis: object | null;
  followups: FollowupDraftInput[];
  lookup: CrmLookup;
  now?: number | undefined;
  /** Collects a warning for each optional field that failed and was left out. */
  warnings?: string[] | undefined;
}
