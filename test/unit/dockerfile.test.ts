import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDockerfile, checkDockerignore, isIgnored, parseDockerfile } from '../../scripts/check-dockerfile.js';

const root = join(import.meta.dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(join(root, '.dockerignore'), 'utf8');

/** The real Dockerfile with one change; fails the test if the text to change is not there. */
function mutate(search: string | RegExp, replacement: string): string {
  const changed = dockerfile.replace(search, replacement);
  expect(changed, `the Dockerfile no longer contains ${String(search)}`).not.toBe(dockerfile);
  return changed;
}

const rules = (text: string) => [...new Set(checkDockerfile(text).map((finding) => finding.rule))].sort();

describe('the static check of the container image', () => {
  it('passes the real Dockerfile and .dockerignore', () => {
    expect(checkDockerfile(dockerfile)).toEqual([]);
    expect(checkDockerignore(dockerignore)).toEqual([]);
  });

  it.each([
    ['a base pinned by tag only', () => mutate(/(FROM node:24-bookworm-slim)@sha256:[0-9a-f]{64}/, '$1'), ['pinned-base']],
    ['the latest tag', () => mutate(/FROM node:24-bookworm-slim@sha256:[0-9a-f]{64}/, 'FROM node:latest'), ['no-latest', 'pinned-base']],
    ['a base with no tag at all', () => mutate(/FROM node:24-bookworm-slim@sha256:[0-9a-f]{64}/, 'FROM node'), ['no-latest', 'pinned-base']],
    ['a truncated digest', () => mutate(/(@sha256:[0-9a-f]{60})[0-9a-f]{4}( AS runtime)/, '$1$2'), ['pinned-base']],
    ['no USER', () => mutate(/^USER .*$/m, ''), ['non-root-user']],
    ['USER root', () => mutate(/^USER .*$/m, 'USER root'), ['non-root-user']],
    ['USER 0', () => mutate(/^USER .*$/m, 'USER 0:0'), ['non-root-user']],
    ['a named user', () => mutate(/^USER .*$/m, 'USER nonroot'), ['non-root-user']],
    ['no production-only install', () => mutate('npm prune --omit=dev', 'npm prune'), ['production-dependencies']],
    ['npm install', () => mutate('npm ci --ignore-scripts', 'npm install --ignore-scripts'), ['npm-ci']],
    ['no HEALTHCHECK', () => mutate(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, ''), ['healthcheck']],
    ['a shell-form HEALTHCHECK', () => mutate(/CMD \["\/nodejs\/bin\/node", "-e", .*\]$/m, 'CMD curl -f http://127.0.0.1:3000/healthz'), ['healthcheck']],
    ['HEALTHCHECK NONE', () => mutate(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, 'HEALTHCHECK NONE\n'), ['healthcheck']],
    ['another stop signal', () => mutate('STOPSIGNAL SIGTERM', 'STOPSIGNAL SIGKILL'), ['stopsignal']],
    ['no /data volume', () => mutate('VOLUME /data', 'VOLUME /tmp'), ['volume']],
    ['the database outside the volume', () => mutate('DATABASE_URL=sqlite:/data/rz-auth.db', 'DATABASE_URL=sqlite:/app/rz-auth.db'), ['volume']],
    ['no metrics port', () => mutate('EXPOSE 3000 9464', 'EXPOSE 3000'), ['expose']],
    ['no licence label', () => mutate(/org\.opencontainers\.image\.licenses="MIT"/, 'org.opencontainers.image.vendor="x"'), ['oci-labels']],
    ['a shell-form command', () => mutate('CMD ["serve"]', 'CMD node dist/cli.js serve'), ['exec-form']],
    ['another command', () => mutate('CMD ["serve"]', 'CMD ["migrate"]'), ['exec-form']],
    ['ADD', () => mutate('COPY --from=build /src/assets ./assets', 'ADD assets ./assets'), ['copy-not-add']],
    ['an apt-get install that keeps its lists', () => mutate(' \\\n  && rm -rf /var/lib/apt/lists/*', ''), ['apt-hygiene']],
    ['npm in the runtime stage', () => mutate('USER 10001:10001', 'RUN npm ci --omit=dev\nUSER 10001:10001'), ['npm-ci']],
    ['an unpinned syntax directive', () => `# syntax=docker/dockerfile:1\n${dockerfile}`, ['pinned-base']],
    ['another runtime base', () => mutate(/gcr\.io\/distroless\/nodejs24-debian12:nonroot/, 'gcr.io/distroless/nodejs20-debian12'), ['runtime-base']],
  ])('refuses %s', (_name, make, expected) => {
    expect(rules(make())).toEqual(expected);
  });

  it('judges the user and the command of the final stage, not of an earlier one', () => {
    const userInBuildOnly = mutate(/^USER .*$/m, '').replace('WORKDIR /src', 'WORKDIR /src\nUSER 10001:10001');
    expect(rules(userInBuildOnly)).toEqual(['non-root-user']);
    const single = dockerfile.slice(dockerfile.indexOf('FROM gcr.io'));
    expect(rules(single)).toEqual(['multi-stage', 'production-dependencies']);
  });

  it('reads continuation lines as one instruction and ignores comments', () => {
    const instructions = parseDockerfile('# c\nFROM a@sha256:1 AS b\nRUN one \\\n  # not a comment inside? \\\n  two\nUSER 1\n');
    expect(instructions.map((item) => [item.keyword, item.line, item.stage])).toEqual([['FROM', 2, 0], ['RUN', 3, 0], ['USER', 6, 0]]);
    expect(instructions[1]?.args).toBe('one two');
  });
});

describe('the .dockerignore check', () => {
  it('follows Docker: the last matching pattern decides, parents match, ** spans directories', () => {
    const rules = '*\n!src/\n**/node_modules\n!keep/**/*.txt\n';
    expect(isIgnored(rules, 'README.md')).toBe(true);
    expect(isIgnored(rules, 'src/cli.ts')).toBe(false);
    expect(isIgnored(rules, 'src/node_modules/x.js')).toBe(true);
    expect(isIgnored(rules, 'keep/a/b/c.txt')).toBe(false);
    expect(isIgnored(rules, 'keep/a/b/c.md')).toBe(true);
    expect(isIgnored('/dist/\n', 'dist/cli.js')).toBe(true);
    expect(isIgnored('data/*.db\n', 'data/rz-auth.db')).toBe(true);
    expect(isIgnored('data/*.db\n', 'data/sub/rz-auth.db')).toBe(false);
  });

  it('refuses a context that would carry node_modules, dist, .git, the database or secrets, or lacks the sources', () => {
    const messages = (text: string) => checkDockerignore(text).map((finding) => finding.message);
    expect(messages('')).toEqual(expect.arrayContaining([
      'node_modules/fastify/package.json would be sent to the builder',
      '.git/HEAD would be sent to the builder',
      'data/rz-auth.db would be sent to the builder',
      '.env would be sent to the builder',
    ]));
    expect(messages(dockerignore.replace('**/node_modules\n', ''))).toEqual([]); // `*` already leaves out the root's
    const wholePackage = dockerignore.replace('!packages/verify/src/\n', '!packages/verify/\n');
    expect(messages(wholePackage)).toEqual([]); // its node_modules and dist stay out all the same
    expect(messages(wholePackage.replace('**/dist\n', ''))).toEqual(['packages/verify/dist/index.js would be sent to the builder']);
    expect(messages(dockerignore.replace('!src/\n', ''))).toEqual(['src/cli.ts is left out, but the build reads it']);
  });
});

describe('scripts/check-dockerfile.ts on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-dockerfile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (file: string) => spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'check-dockerfile.ts'), file, join(root, '.dockerignore')], { encoding: 'utf8' });

  it('exits 0 on the real Dockerfile and 1, naming the rule, on a broken one', () => {
    const good = run(join(root, 'Dockerfile'));
    expect(good.status).toBe(0);
    expect(good.stdout).toMatch(/16 of 16 rules passed/);
    const bad = join(dir, 'Dockerfile');
    writeFileSync(bad, mutate('STOPSIGNAL SIGTERM', 'STOPSIGNAL SIGINT'));
    const result = run(bad);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('FAIL stopsignal: no STOPSIGNAL SIGTERM');
    expect(result.stdout).toMatch(/15 of 16 rules passed/);
  });

  it('is what scripts/container-check.sh runs, and says which check ran', () => {
    const script = readFileSync(join(root, 'scripts', 'container-check.sh'), 'utf8');
    expect(script).toContain('node --import tsx scripts/check-dockerfile.ts');
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toContain('bash scripts/container-check.sh');
    const engineWorks = ['docker', 'podman'].some((engine) => spawnSync(engine, ['info'], { timeout: 20_000 }).status === 0);
    if (engineWorks) return; // the full run builds the image: CI's step, too slow for a unit test
    const output = execFileSync('bash', [join(root, 'scripts', 'container-check.sh')], { encoding: 'utf8', cwd: root });
    expect(output.trim().split('\n').at(-1)).toMatch(/^Container image: STATIC CHECK ONLY \(/);
  });
});

describe('the deployment docs of the image', () => {
  const deployment = readFileSync(join(root, 'docs', 'deployment.md'), 'utf8');
  const compose = readFileSync(join(root, 'examples', 'compose', 'compose.yaml'), 'utf8');
  const section = deployment.slice(deployment.indexOf('## Container image'), deployment.indexOf('## Health and shutdown'));
  const sources = execFileSync('git', ['grep', '-h', '-o', "'[A-Z][A-Z0-9_]*'", '--', 'src'], { cwd: root, encoding: 'utf8' });
  const readBySrc = new Set(sources.split('\n').map((name) => name.slice(1, -1)));

  it('show the committed Compose file as it is', () => {
    expect(section).toContain(`\`\`\`yaml\n${compose}\`\`\``);
  });

  it('name only variables rz-auth reads (besides the PostgreSQL image\'s own)', () => {
    const fromDockerfile = [...new Set(parseDockerfile(dockerfile).filter((item) => item.keyword === 'ENV').flatMap((item) => [...item.args.matchAll(/([A-Z_]+)=/g)].map((match) => match[1])))];
    const fromCompose = [...compose.matchAll(/^ {6}([A-Z][A-Z0-9_]*):/gm)].map((match) => match[1]);
    const fromDocs = [...section.matchAll(/(?:-e |\\n|')([A-Z][A-Z0-9_]{2,})(?==| |\\)/g)].map((match) => match[1]);
    const names = [...new Set([...fromDockerfile, ...fromCompose, ...fromDocs])].filter((name) => name !== undefined && !name.startsWith('POSTGRES_'));
    expect(names).toEqual(expect.arrayContaining(['HOST', 'DATABASE_URL', 'SHUTDOWN_TIMEOUT_MS', 'REDIS_URL', 'METRICS_ADDR', 'METRICS_TOKEN', 'KEY_ENCRYPTION_KEY', 'TRUST_PROXY']));
    expect(names.filter((name) => !readBySrc.has(name ?? ''))).toEqual([]);
  });
});
