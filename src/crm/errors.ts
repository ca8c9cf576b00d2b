/**
 * What a CRM said, as one class per outcome, so callers branch on the class:
 * retry later (transient, rate limited), stop (auth), or fail the call now (rejected).
 */
export type CrmErrorCode =
  | 'CRM_AUTH'
  | 'CRM_RATE_LIMITED'
  | 'CRM_DAILY_LIMIT'
  | 'CRM_REJECTED'
  | 'CRM_VALIDATION_REJECTED'
  | 'CRM_KEY_FIELD_MISSING'
  | 'CRM_NOT_FOUND'
  | 'CRM_TRANSIENT'
  | 'CRM_SETUP';

export abstract class CrmError extends Error {
  abstract readonly code: CrmErrorCode;
  abstract readonly retryable: boolean;
  constructor(
    message: string,
    readonly crm: 'hubspot' | 'salesforce',
    readonly status?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Credentials invalid and a refresh did not help: stop writing, tell the operator. */
export class CrmAuthError extends CrmError {
  readonly code = 'CRM_AUTH';
  readonly retryable = false;
}

/** Short-window limit: wait `retryAfterMs` and try again. */
export class CrmRateLimitedError extends CrmError {
  readonly code = 'CRM_RATE_LIMITED';
  readonly retryable = true;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status: number | undefined,
    readonly retryAfterMs: number,
  ) {
    super(message, crm, status);
  }
}

/** The daily/org API allowance is spent: wait `retryAfterMs` (usually until the quota resets). */
export class CrmDailyLimitError extends CrmError {
  readonly code = 'CRM_DAILY_LIMIT';
  readonly retryable = true;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status: number | undefined,
    readonly retryAfterMs: number,
  ) {
    super(message, crm, status);
  }
}

/** The CRM refused the data (a value, a missing field, permission): do not retry as is. */
export class CrmRejectedError extends CrmError {
  readonly code: CrmErrorCode = 'CRM_REJECTED';
  readonly retryable = false;
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status?: number,
    readonly fields: string[] = [],
  ) {
    super(message, crm, status);
  }
}

export class CrmNotFoundError extends CrmError {
  readonly code = 'CRM_NOT_FOUND';
  readonly retryable = false;
}

/** 5xx, timeouts, resets: retry with backoff. */
export class CrmTransientError extends CrmError {
  readonly code = 'CRM_TRANSIENT';
  readonly retryable = true;
}

/** A mapped custom field or property is missing: run `crm-sync doctor`. */
export class CrmSetupError extends CrmError {
  readonly code = 'CRM_SETUP';
  readonly retryable = false;
}

/**
 * The CRM lacks a field the write names (Salesforce INVALID_FIELD "No such column", HubSpot
 * PROPERTY_DOESNT_EXIST): optional ones are left out and the call written (src/crm/fieldGaps.ts).
 */
export class CrmFieldMissingError extends CrmRejectedError {
  constructor(
    message: string,
    crm: 'hubspot' | 'salesforce',
    status: number | undefined,
    fields: string[],
    /** The object written (HubSpot object type, Salesforce sObject), when the adapter knows it. */
    readonly object?: string,
  ) {
    super(message, crm, status, fields);
  }

  /** The same refusal, naming the object written. */
  on(object: string): CrmFieldMissingError {
    return new CrmFieldMissingError(this.message, this.crm, this.status, this.fields, object);
  }
}

/**
 * The field exactly-once rests on (the upsert key: the activity's call id, the draft's follow-up
 * key) does not exist: nothing is written, since without it a retry would write the record twice.
 */
export class CrmKeyFieldMissingError extends CrmError {
  readonly code = 'CRM_KEY_FIELD_MISSING';
  readonly retryable = false;
  constructor(
    crm: 'hubspot' | 'salesforce',
    readonly object: string,
    readonly field: string,
  ) {
    super(
      `${crmLabel(crm)} has no ${object}.${field}, the upsert key that keeps each ${object} written once: ` +
        `nothing was written; ${fieldFix(crm, object, field, true)}, then replay`,
      crm,
      400,
    );
  }
}

/**
 * A refusal only the CRM's admin can resolve: a HubSpot portal rule (2026-09 write validation:
 * a property required on create, a conditionally required one) or a Salesforce validation rule or
 * required field. Fails the call alone, never retried; the message says the fix in words.
 */
export class CrmValidationError extends CrmError {
  readonly code = 'CRM_VALIDATION_REJECTED';
  readonly retryable = false;
  constructor(
    crm: 'hubspot' | 'salesforce',
    readonly object: string,
    /** The property the rule names, when the CRM says which. */
    readonly property: string | undefined,
    /** The CRM's own words (the rule's error message). */
    readonly crmMessage: string,
    status = 400,
  ) {
    super(`${validationFix(crm, object, property)} (${crmLabel(crm)}: ${crmMessage})`, crm, status);
  }

  /** The same refusal, naming the object written. */
  on(object: string): CrmValidationError {
    return new CrmValidationError(this.crm, object, this.property, this.crmMessage, this.status);
  }
}

const crmLabel = (crm: 'hubspot' | 'salesforce') => (crm === 'hubspot' ? 'HubSpot' : 'Salesforce');

/** What the admin does about a validation refusal, in words (status, console, doctor). */
export function validationFix(crm: 'hubspot' | 'salesforce', object: string, property?: string): string {
  const who = crm === 'hubspot' ? 'the portal' : 'the org';
  const rule = crm === 'hubspot' ? 'relax the rule' : 'relax the validation rule or the required field';
  return property
    ? `${who} requires \`${property}\` on ${object}: map it in config/mappings or ${rule}`
    : `a rule of ${who} refused the ${object}: map what it asks for in config/mappings or ${rule}`;
}

/** How to create a missing field: `doctor --fix` on HubSpot, by hand in Salesforce Setup. */
export function fieldFix(crm: 'hubspot' | 'salesforce', object: string, field: string, key = false): string {
  if (crm === 'hubspot') return `run \`crm-sync doctor --fix\` to create the ${object} property ${field}`;
  const kind = key ? 'Text(255), External ID, Unique' : 'the type docs/install.md names';
  return `create ${object}.${field} in Salesforce Setup (Object Manager, ${kind}; docs/install.md)`;
}
