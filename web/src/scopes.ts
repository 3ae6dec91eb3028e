/**
 * The API token scope catalogue, as in src/tokens/scopes.ts (the browser build cannot import server
 * code; test/browser checks the two agree).
 */
export const SCOPES: ReadonlyArray<{ readonly scope: string; readonly grants: string }> = [
  { scope: 'apps:read', grants: 'List and read your apps.' },
  { scope: 'apps:write', grants: 'Register and delete your apps and issue app tokens.' },
  { scope: 'tokens:read', grants: 'List your API tokens (never their values).' },
];
