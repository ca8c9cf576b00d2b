import { errorBody, type HubSpotErrorBody } from './errors.js';

/**
 * The scope each dated request needs, as HubSpot's reference lists them under "Requirements":
 * `crm.objects.{contacts|companies|deals}.{read|write}` for records, searches and their
 * associations; calls, notes and tasks are engagements under the contacts scopes (public spec
 * calls.json/notes.json/tasks.json: `crm.objects.contacts.read`/`.write`); properties need
 * `crm.schemas.{family}.{read|write}`; owners `crm.objects.owners.read`. A credential without one
 * is answered 403 `MISSING_SCOPES` naming it in `errors[].context.requiredGranularScopes`
 * (HubSpot scopes guide, "Find required scopes for an endpoint"; the error as HubSpot returns it).
 */
const FAMILY: Record<string, string> = { companies: 'companies', deals: 'deals' };
const family = (type: string) => FAMILY[type] ?? 'contacts';

export function requiredScope(method: string, path: string): string | undefined {
  const [, api, area, , type, ...rest] = path.split('/');
  if (api !== 'crm') return undefined;
  const reading =
    method === 'GET' ||
    (method === 'POST' && (rest.join('/') === 'search' || rest.join('/') === 'batch/read'));
  const access = reading ? 'read' : 'write';
  if (area === 'owners') return 'crm.objects.owners.read';
  if (area === 'properties' && type) return `crm.schemas.${family(type)}.${access}`;
  if ((area === 'objects' || area === 'associations') && type) return `crm.objects.${family(type)}.${access}`;
  return undefined;
}

export function missingScopesBody(scope: string): HubSpotErrorBody {
  return errorBody(
    'MISSING_SCOPES',
    "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
    {
      errors: [
        {
          message: 'One or more of the following scopes are required.',
          context: { requiredGranularScopes: [scope] },
        },
      ],
    },
  );
}
