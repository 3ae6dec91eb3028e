// Preloaded with `node --import`: records in the file RZ_MODULE_LOG every module the process
// loads, ES modules by the URL they resolve to and CommonJS files (what require.cache holds at exit).
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import process from 'node:process';

const log = process.env.RZ_MODULE_LOG;
const hook = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
process.on('exit', () => appendFileSync(log, `${Object.keys(Module._cache).join('\n')}\n`));
