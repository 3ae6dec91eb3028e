import { readFileSync } from 'node:fs';
import { packageFile } from './lib/package-file.js';

/** The package version, read once from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
