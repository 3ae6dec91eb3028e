// Writes types/openapi.d.ts: the TypeScript types of the OpenAPI document, as openapi-typescript
// generates them from what the TypeBox schemas of the routes produce. The Developers page, the
// verifier package and the tests import their wire types from it, so none is written twice.
// The app is built in memory and never listens. `npm run build` and `npm run typecheck` run it first.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/composition-root.js';
import { wireTypes } from './wire-types.js';

const target = join(import.meta.dirname, '..', 'types', 'openapi.d.ts');

const services = await createServices(loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'warn' }));
try {
  // The page's build may not exist yet: the warning about it is of no interest here.
  const app = await createApp(services, { logStream: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const document = app.swagger();
  await app.close();
  const text = await wireTypes(document);
  mkdirSync(join(target, '..'), { recursive: true });
  // Left alone when unchanged, so tools watching its time see no change.
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // Not generated yet.
  }
  if (current !== text) writeFileSync(target, text);
} finally {
  await services.close();
}
