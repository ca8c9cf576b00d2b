/**
 * The sObjects the sandbox knows, shaped like the parts of a describe result the adapter reads.
 * Lengths and properties follow Salesforce's Object Reference where it states them.
 */
export type FieldType =
  | 'id'
  | 'string'
  | 'textarea'
  | 'email'
  | 'url'
  | 'phone'
  | 'picklist'
  | 'reference'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'double'
  | 'int'
  | 'currency'
  | 'percent';

export interface FieldDef {
  name: string;
  type: FieldType;
  length: number;
  label: string;
  createable: boolean;
  updateable: boolean;
  nillable: boolean;
  custom: boolean;
  externalId: boolean;
  unique: boolean;
  /** Required on create and not defaulted. */
  required: boolean;
  referenceTo: string[];
  relationshipName: string | null;
  /** Restricted picklists only; others accept any value. */
  picklistValues?: string[] | undefined;
  defaultValue?: string | undefined;
}

export interface ObjectDef {
  name: string;
  keyPrefix: string;
  fields: FieldDef[];
}

const STRING_TYPES: ReadonlySet<FieldType> = new Set([
  'string',
  'textarea',
  'email',
  'url',
  'phone',
  'picklist',
]);
export const isStringType = (t: FieldType): boolean => STRING_TYPES.has(t);
export const isNumberType = (t: FieldType): boolean =>
  t === 'double' || t === 'int' || t === 'currency' || t === 'percent';

type Opts = Partial<Omit<FieldDef, 'name' | 'type'>>;

function f(name: string, type: FieldType, opts: Opts = {}): FieldDef {
  const textLike = isStringType(type) || type === 'id' || type === 'reference';
  return {
    name,
    type,
    length: opts.length ?? (type === 'id' || type === 'reference' ? 18 : textLike ? 255 : 0),
    label: opts.label ?? name.replace(/__c$/, '').replace(/_/g, ' '),
    createable: opts.createable ?? true,
    updateable: opts.updateable ?? opts.createable ?? true,
    nillable: opts.nillable ?? !opts.required,
    custom: name.endsWith('__c'),
    externalId: opts.externalId ?? false,
    unique: opts.unique ?? false,
    required: opts.required ?? false,
    referenceTo: opts.referenceTo ?? [],
    relationshipName: opts.relationshipName ?? null,
    picklistValues: opts.picklistValues,
    defaultValue: opts.defaultValue,
  };
}

const readOnly: Opts = { createable: false, updateable: false };
const system = (): FieldDef[] => [
  f('Id', 'id', { ...readOnly, nillable: false }),
  f('CreatedDate', 'datetime', readOnly),
  f('LastModifiedDate', 'datetime', readOnly),
];
const owner = (to: string[] = ['User']): FieldDef =>
  f('OwnerId', 'reference', { referenceTo: to, relationshipName: 'Owner' });
const number = (name: string): FieldDef => f(name, 'double');

/** Custom fields crm-sync asks the admin to create; left out with `withCustomFields: false`. */
export const CUSTOM_FIELDS: Record<string, FieldDef[]> = {
  Task: [
    f('CrmSync_Call_Id__c', 'string', { length: 255, externalId: true, unique: true }),
    f('CrmSync_Followup_Id__c', 'string', { length: 255, externalId: true, unique: true }),
    number('CrmSync_Score_Overall__c'),
    number('CrmSync_Score_Rapport__c'),
    number('CrmSync_Score_Discovery__c'),
    number('CrmSync_Score_Objection_Handling__c'),
    number('CrmSync_Score_Closing__c'),
    number('CrmSync_Objections_Detected__c'),
    number('CrmSync_Objections_Handled__c'),
    // Stamped before follow-ups are asked for (src/mapping/writeback.ts).
    f('CrmSync_Followups_Generated_At__c', 'datetime'),
  ],
  // Deal-level signals (the mappings' `deal` section).
  Opportunity: [
    f('CrmSync_Last_Call_Date__c', 'date'),
    number('CrmSync_Last_Call_Score__c'),
    number('CrmSync_Average_Score__c'),
    number('CrmSync_Open_Objections__c'),
    f('CrmSync_Last_Next_Step__c', 'string', { length: 255 }),
  ],
  EmailMessage: [
    f('CrmSync_Followup_Id__c', 'string', { length: 255, externalId: true, unique: true }),
    // The draft's call id: not unique, a call has several drafts.
    f('CrmSync_Call_Id__c', 'string', { length: 255 }),
  ],
};

function standardObjects(): ObjectDef[] {
  return [
    {
      name: 'User',
      keyPrefix: '005',
      fields: [
        ...system(),
        f('Username', 'string', { length: 80, required: true }),
        f('FirstName', 'string', { length: 40 }),
        f('LastName', 'string', { length: 80, required: true }),
        f('Name', 'string', { length: 121, ...readOnly }),
        f('Email', 'email', { length: 128, required: true }),
        f('Title', 'string', { length: 80 }),
        f('IsActive', 'boolean'),
      ],
    },
    {
      name: 'Account',
      keyPrefix: '001',
      fields: [
        ...system(),
        f('Name', 'string', { length: 255, required: true }),
        f('Website', 'url', { length: 255 }),
        f('Industry', 'picklist', { length: 255 }),
        f('Phone', 'phone', { length: 40 }),
        f('NumberOfEmployees', 'int'),
        owner(),
      ],
    },
    {
      name: 'Contact',
      keyPrefix: '003',
      fields: [
        ...system(),
        f('FirstName', 'string', { length: 40 }),
        f('LastName', 'string', { length: 80, required: true }),
        f('Name', 'string', { length: 121, ...readOnly }),
        f('Email', 'email', { length: 80 }),
        f('Phone', 'phone', { length: 40 }),
        f('Title', 'string', { length: 128 }),
        f('AccountId', 'reference', { referenceTo: ['Account'], relationshipName: 'Account' }),
        owner(),
      ],
    },
    {
      name: 'Lead',
      keyPrefix: '00Q',
      fields: [
        ...system(),
        f('FirstName', 'string', { length: 40 }),
        f('LastName', 'string', { length: 80, required: true }),
        f('Name', 'string', { length: 121, ...readOnly }),
        f('Email', 'email', { length: 80 }),
        f('Company', 'string', { length: 255, required: true }),
        f('Title', 'string', { length: 128 }),
        f('Phone', 'phone', { length: 40 }),
        f('Status', 'picklist', { length: 255, defaultValue: 'Open - Not Contacted' }),
        f('IsConverted', 'boolean', { createable: true, updateable: false }),
        // Lead owners may be queues (Group); the sandbox seeds users only.
        owner(['Group', 'User']),
      ],
    },
    {
      name: 'Opportunity',
      keyPrefix: '006',
      fields: [
        ...system(),
        f('Name', 'string', { length: 120, required: true }),
        f('AccountId', 'reference', { referenceTo: ['Account'], relationshipName: 'Account' }),
        f('StageName', 'picklist', { length: 255, required: true }),
        f('CloseDate', 'date', { required: true }),
        f('Amount', 'currency'),
        f('Probability', 'percent'),
        // Derived from StageName, as Salesforce derives them from the stage's settings.
        f('IsClosed', 'boolean', readOnly),
        f('IsWon', 'boolean', readOnly),
        owner(),
      ],
    },
    {
      name: 'Task',
      keyPrefix: '00T',
      fields: [
        ...system(),
        f('Subject', 'string', { length: 255 }),
        f('Description', 'textarea', { length: 32000 }),
        f('ActivityDate', 'date'),
        f('Status', 'picklist', { length: 40, defaultValue: 'Not Started' }),
        f('Priority', 'picklist', { length: 40, defaultValue: 'Normal' }),
        // TaskSubtype: Create but not Update in the Object Reference.
        f('TaskSubtype', 'picklist', {
          length: 40,
          createable: true,
          updateable: false,
          picklistValues: ['Task', 'Email', 'ListEmail', 'Cadence', 'Call', 'LinkedIn'],
        }),
        f('Type', 'picklist', { length: 40 }),
        f('CallType', 'picklist', { length: 40, picklistValues: ['Inbound', 'Internal', 'Outbound'] }),
        f('CallDurationInSeconds', 'int'),
        f('CallDisposition', 'string', { length: 255 }),
        f('CallObject', 'string', { length: 255 }),
        f('WhoId', 'reference', { referenceTo: ['Contact', 'Lead'], relationshipName: 'Who' }),
        f('WhatId', 'reference', { referenceTo: ['Account', 'Opportunity'], relationshipName: 'What' }),
        f('AccountId', 'reference', { ...readOnly, referenceTo: ['Account'], relationshipName: 'Account' }),
        f('IsClosed', 'boolean', readOnly),
        owner(),
      ],
    },
    {
      name: 'EmailMessage',
      keyPrefix: '02s',
      fields: [
        ...system(),
        f('Subject', 'string', { length: 3000 }),
        f('TextBody', 'textarea', { length: 131072 }),
        f('HtmlBody', 'textarea', { length: 131072 }),
        f('ToAddress', 'string', { length: 4000 }),
        f('FromAddress', 'email', { length: 1000 }),
        f('FromName', 'string', { length: 1000 }),
        // Status codes: 0 new, 1 read, 2 replied, 3 sent, 4 forwarded, 5 draft.
        f('Status', 'picklist', {
          length: 40,
          required: true,
          picklistValues: ['0', '1', '2', '3', '4', '5'],
        }),
        f('MessageDate', 'datetime'),
        f('RelatedToId', 'reference', {
          referenceTo: ['Account', 'Opportunity'],
          relationshipName: 'RelatedTo',
        }),
      ],
    },
  ];
}

/**
 * Custom fields a later crm-sync release added: an org set up for the previous release lacks them
 * (issue 21: no EmailMessage.CrmSync_Call_Id__c, no Opportunity deal-signal fields, no follow-up
 * generation stamp). `fieldSet: 'previous'` models such an org after an upgrade.
 */
export const ADDED_SINCE_PREVIOUS_RELEASE: Record<string, string[]> = {
  Task: ['CrmSync_Followups_Generated_At__c'],
  EmailMessage: ['CrmSync_Call_Id__c'],
  Opportunity: CUSTOM_FIELDS.Opportunity!.map((fd) => fd.name),
};

export type FieldSet = 'current' | 'previous';

/** The org's objects; `withCustomFields: false` models an org where doctor has work to do. */
export function buildSchema(
  withCustomFields: boolean,
  fieldSet: FieldSet = 'current',
): Map<string, ObjectDef> {
  const objects = new Map<string, ObjectDef>();
  for (const obj of standardObjects()) {
    const later = new Set(fieldSet === 'previous' ? (ADDED_SINCE_PREVIOUS_RELEASE[obj.name] ?? []) : []);
    const extra = withCustomFields ? (CUSTOM_FIELDS[obj.name] ?? []).filter((fd) => !later.has(fd.name)) : [];
    objects.set(obj.name.toLowerCase(), { ...obj, fields: [...obj.fields, ...extra] });
  }
  return objects;
}

export function findField(obj: ObjectDef, name: string): FieldDef | undefined {
  const lower = name.toLowerCase();
  return obj.fields.find((fd) => fd.name.toLowerCase() === lower);
}

/** The describe document for one object (the subset of Salesforce's DescribeSObjectResult we model). */
export function describeObject(obj: ObjectDef, baseUrl: string): Record<string, unknown> {
  return {
    name: obj.name,
    label: obj.name,
    keyPrefix: obj.keyPrefix,
    custom: false,
    createable: true,
    updateable: true,
    queryable: true,
    urls: {
      sobject: `${baseUrl}/sobjects/${obj.name}`,
      describe: `${baseUrl}/sobjects/${obj.name}/describe`,
    },
    fields: obj.fields.map((fd) => ({
      name: fd.name,
      label: fd.label,
      type: fd.type,
      length: fd.length,
      createable: fd.createable,
      updateable: fd.updateable,
      nillable: fd.nillable,
      custom: fd.custom,
      externalId: fd.externalId,
      unique: fd.unique,
      idLookup: fd.type === 'id' || fd.externalId,
      caseSensitive: false,
      defaultedOnCreate: fd.defaultValue !== undefined || fd.type === 'id' || fd.type === 'boolean',
      referenceTo: fd.referenceTo,
      relationshipName: fd.relationshipName,
      restrictedPicklist: fd.picklistValues !== undefined,
      picklistValues: (fd.picklistValues ?? []).map((v) => ({ value: v, label: v, active: true })),
      soapType: soapType(fd.type),
    })),
  };
}

function soapType(t: FieldType): string {
  if (t === 'id' || t === 'reference') return 'tns:ID';
  if (t === 'boolean') return 'xsd:boolean';
  if (t === 'date') return 'xsd:date';
  if (t === 'datetime') return 'xsd:dateTime';
  if (t === 'int') return 'xsd:int';
  if (isNumberType(t)) return 'xsd:double';
  return 'xsd:string';
}
