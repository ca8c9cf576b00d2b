/**
 * What an admin can do about each error code, in plain words (the codes are listed in the README's
 * "Error codes" table, which says what the worker does on its own).
 */
const HINTS: Record<string, string> = {
  SERVICE_BAD_REQUEST: 'The Service refused the request. Check the call at the Service, then replay.',
  SERVICE_FORBIDDEN:
    'The API key may not read this call. Check the key’s permissions at the Service, then replay.',
  SERVICE_NOT_FOUND: 'The Service no longer has this call (deleted?). Nothing to do unless it comes back.',
  SERVICE_BAD_RESPONSE:
    'The Service answered something unreadable. Replay; if it repeats, contact the Service.',
  SERVICE_UNAUTHORIZED:
    'The Service rejected the API key. Replace SERVICE_API_KEY and restart the worker: the calls held meanwhile resume by themselves, no replay needed.',
  SERVICE_NOT_READY:
    'The Service had no analysis for this call 48 hours after it (or, for an older call found by a backfill, when crm-sync looked). Replay once the analysis shows at the Service.',
  SERVICE_RATE_LIMITED:
    'The Service asked to slow down. The worker waits on its own; replay only if calls stay failed.',
  SERVICE_DAILY_CAP: 'The daily request cap was spent. The work resumes after midnight UTC; replay then.',
  BUDGET_DAILY_CAP: 'The daily request cap was spent. The work resumes after midnight UTC; replay then.',
  SERVICE_TRANSIENT: 'The Service was unreachable. Replay when it is back.',
  CRM_AUTH:
    'The CRM rejected the credentials. Fix the setting crm-sync doctor names and restart the worker: the calls held meanwhile resume by themselves, no replay needed.',
  CRM_RATE_LIMITED: 'The CRM’s rate limit was hit. Replay after its reset.',
  CRM_DAILY_LIMIT: 'The CRM’s daily API limit was spent. Replay after its reset.',
  CRM_REJECTED:
    'The CRM refused the data (a field’s value or type). Check the message, fix the mapping or the field, then replay.',
  CRM_VALIDATION_REJECTED:
    'A rule of the CRM’s admin refused these calls (the message names the object and property). Map the property in config/mappings or relax the rule in the CRM, then replay them.',
  CRM_KEY_FIELD_MISSING:
    'The CRM lacks the external-id field each write is keyed on, so nothing was written. Run crm-sync doctor (--fix on HubSpot) or create the field it names, then replay.',
  CRM_NOT_FOUND: 'A CRM record or field is missing. Run crm-sync doctor, fix what it names, then replay.',
  CRM_SETUP:
    'A custom field is missing in the CRM. Run crm-sync doctor --fix (HubSpot) or create the fields it lists, then replay.',
  CRM_TRANSIENT: 'The CRM was unreachable. Replay when it is back.',
  MAPPING_INVALID:
    'The mapping file is broken. Run crm-sync mappings check, fix the file, restart, then replay.',
  MAPPING_REQUIRED_MISSING:
    'A required mapped field was empty for these calls. Make the field optional or fix its expression, then replay.',
  MAPPING_EVALUATION_FAILED:
    'A mapping expression failed for these calls. Fix the field named in the message, then replay.',
  JOB_LEASE_EXHAUSTED:
    'The worker kept stopping mid-job. Replay; if it repeats, check the worker’s logs and memory.',
  NO_PROGRESS:
    'The worker kept coming back to this call without moving it on. Read its timeline for the repeated error, fix that, then replay.',
  INTERNAL: 'An unexpected error. Replay; if it repeats, report it with the message shown.',
};

export function fixHint(code: string | null): string {
  if (code === null) return 'No error code was recorded. Open a call to read its history, then replay.';
  return HINTS[code] ?? 'Open a call to read the message and its history, then replay.';
}
