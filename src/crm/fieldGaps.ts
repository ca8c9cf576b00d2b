/**
 * Which object each kind of write lands on, per CRM: what a field gap (a field the CRM lacks) is
 * keyed by, since one field name can be optional on one object and the upsert key on another
 * (Salesforce CrmSync_Call_Id__c: the Task's key, an EmailMessage's optional pointer to its call).
 * Pure; the adapters write to these objects (src/crm/hubspot/linkTypes.ts, salesforce/writes.ts).
 */
import type { CrmName, FollowupWrite } from './types.js';

export type WriteTarget = 'activity' | FollowupWrite['kind'] | 'deal';

const OBJECTS: Record<CrmName, Record<WriteTarget, string>> = {
  hubspot: { activity: 'calls', note: 'notes', task: 'tasks', email: 'emails', deal: 'deals' },
  salesforce: { activity: 'Task', note: 'Note', task: 'Task', email: 'EmailMessage', deal: 'Opportunity' },
};

export function writeObject(crm: CrmName, target: WriteTarget): string {
  return OBJECTS[crm][target];
}

/** `object.field`, compared without case (Salesforce names are case-insensitive). */
export function gapKey(object: string, field: string): string {
  return `${object.toLowerCase()}\u0000${field.toLowerCase()}`;
}
