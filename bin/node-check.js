// The Node.js versions crm-sync runs on (package.json engines). Plain JS, so that it runs before
// anything that needs a newer Node does: its dependencies (undici 8, the HubSpot SDK) need 22.19+.

/** A message for a Node version crm-sync cannot run on, or null for a supported one. */
export function unsupportedNode(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return null;
  return `crm-sync needs Node.js 22.19 or later (24 LTS recommended); this is v${version.replace(/^v/, '')}.`;
}
