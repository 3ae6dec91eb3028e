import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The platform scopes the tests declare: one for each token type, one for both. */
export const PLATFORM_SCOPES = [
  { name: 'games:publish', description: 'Publish games to the catalogue.' },
  { name: 'scores:write', description: 'Post scores to the boards.', token_types: ['app_token'] },
  { name: 'catalogue:admin:read', description: 'Read the catalogue admin pages.', token_types: ['api_token'] },
];

/** Writes a SCOPES_FILE into `dir` and returns the environment that names it. */
export function scopesFileEnv(dir: string, scopes: readonly unknown[] = PLATFORM_SCOPES): { SCOPES_FILE: string } {
  const path = join(dir, 'scopes.json');
  writeFileSync(path, JSON.stringify({ scopes }));
  return { SCOPES_FILE: path };
}
