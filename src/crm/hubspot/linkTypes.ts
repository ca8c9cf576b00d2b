/** Association type ids from an engagement to a contact, company and deal. */
export interface LinkTypes {
  contact: number;
  company: number;
  deal: number;
}

/** HubSpot batch endpoints take at most 100 inputs. */
export const BATCH_SIZE = 100;

// Association type ids (HUBSPOT_DEFINED, SDK AssociationTypes enum; v4 "Association type id values").
export const CALL_LINKS: LinkTypes = { contact: 194, company: 182, deal: 206 };
export const NOTE_LINKS: LinkTypes = { contact: 202, company: 190, deal: 214 };
export const TASK_LINKS: LinkTypes = { contact: 204, company: 192, deal: 216 };

/** A record crm-sync writes, as HubSpot names its object type, with its link types. */
export function engagementOf(record: 'activity' | 'note' | 'task' | 'email' | undefined): {
  objectType: string;
  links: LinkTypes;
} {
  if (record === 'task') return { objectType: 'tasks', links: TASK_LINKS };
  // HubSpot has no email drafts through this API: an 'email' follow-up is kept as a note.
  if (record === 'note' || record === 'email') return { objectType: 'notes', links: NOTE_LINKS };
  return { objectType: 'calls', links: CALL_LINKS };
}
