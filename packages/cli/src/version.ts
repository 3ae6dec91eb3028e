import { readFileSync } from 'node:fs';

/** The package's version, read from package.json (beside both src/ and dist/). */
export const VERSION: string = (() => {
  const data: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return typeof data === 'object' && data !== null && 'version' in data && typeof data.version === 'string' ? data.version : '0.0.0';
})();

/** Shown to the approver on the device page (contract §13.6 `requester.user_agent`). */
export function userAgent(platform: NodeJS.Platform, nodeVersion: string = process.versions.node): string {
  return `rz/${VERSION} (${platform}; node ${nodeVersion.split('.')[0] ?? nodeVersion})`;
}
