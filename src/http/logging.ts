import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { hostname } from 'node:os';
import { type Bindings, type ChildLoggerOptions, type DestinationStream, pino } from 'pino';
import type { Principal } from '../auth/principal.js';
import type { LogLevel } from '../config.js';
import { BoundedMap } from '../lib/bounded-map.js';
import { FdWriter } from '../lib/fd-writer.js';
import { perObject } from '../lib/per-object.js';
import { redactSecrets } from '../lib/redact.js';

const REDACTED = () => '[REDACTED]';

/**
 * Structured JSON logs (pino). Secrets are kept out by construction: the request serializer keeps
 * only method and URL (token-shaped strings scrubbed), errors keep only name, message and stack
 * (scrubbed), and any top-level `headers`, `authorization`, `cookie`, `password` or `token` field is
 * censored. (Serializers run only for keys that are present; pino's path-based redaction cost about
 * 5 µs per line on the hot path.)
 *
 * Access lines are written at the end of the event-loop turn that produced them, other lines at
 * once (see {@link createLogDestination}); a SIGKILL loses at most the access lines of one turn.
 */
export function loggerOptions(level: LogLevel, stream: DestinationStream): FastifyServerOptions['logger'] {
  return {
    level,
    stream,
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: redactSecrets(req.url) }),
      err: (err: Error) => ({
        type: err.name,
        message: redactSecrets(err.message),
        stack: redactSecrets(err.stack ?? ''),
      }),
      headers: REDACTED,
      authorization: REDACTED,
      cookie: REDACTED,
      password: REDACTED,
      token: REDACTED,
    },
  };
}

type LogFn = FastifyBaseLogger['info'];

/**
 * Fastify gives every request a child logger carrying its request id. Creating one costs every
 * request, while only errors use it: this stand-in creates the child on first use. (The per-request
 * line is written through the root logger with the id as a field.)
 */
class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}
  private get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
  get level(): string {
    return this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  fatal(...args: Parameters<LogFn>): void {
    this.logger.fatal(...args);
  }
  error(...args: Parameters<LogFn>): void {
    this.logger.error(...args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.logger.warn(...args);
  }
  info(...args: Parameters<LogFn>): void {
    this.logger.info(...args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.logger.debug(...args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.logger.trace(...args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

export const lazyChildLogger = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  new LazyRequestLogger(logger, bindings, options);

/**
 * The access log: one line per request, in the same JSON shape as pino's lines, written to the same
 * destination as the response is sent (from the lifecycle's onSend hook, so no onResponse hook
 * costs every request). It is the highest-volume line by far, so it is formatted directly instead of
 * through pino's generic serializer (about 5 µs a line on the benchmark machine, a tenth of a
 * request's budget). Every field is an id, a number or an enum except the URL and the address,
 * which are JSON-escaped; the URL has token-shaped strings scrubbed. `ms` is the time to produce
 * the response.
 *
 * The lines of one turn of the event loop go to the destination in one write, at the end of the
 * turn: no line waits longer than that, and under load one write(2) carries many lines (a dozen to
 * thirty in `npm run bench`) instead of one system call per line.
 */
const INFO_ENABLED: ReadonlySet<string> = new Set(['trace', 'debug', 'info']);

/** A URL as the access log shows it: token-shaped strings scrubbed, JSON-escaped. */
export const urlField = (url: string): string => JSON.stringify(redactSecrets(url));

/** How many client addresses {@link AccessLog} keeps encoded. */
const REMOTE_FIELDS = 1024;

/** Whole milliseconds as text, for the `ms` fields under a second (nearly all of them). */
const WHOLE_MS = Array.from({ length: 1000 }, (_, ms) => String(ms));
/** Hundredths of a millisecond as the shortest decimal's fraction: '', '.01' to '.09', '.1', '.11' and so on. */
const FRACTIONS = Array.from({ length: 100 }, (_, n) => (n === 0 ? '' : `.${String(n).padStart(2, '0').replace(/0$/, '')}`));

/**
 * `ms` rounded to hundredths, as JSON: the same text as `String(Math.round(ms * 100) / 100)` (the
 * shortest decimal of n / 100 is n's digits with the point moved), looked up in two tables rather
 * than converted, because finding the shortest decimal of a fraction costs about as much as the
 * rest of the line. Under a second it is at most two pieces, joined into one flat string.
 */
export function hundredths(ms: number): string {
  const n = Math.round(ms * 100);
  if (!(n >= 0 && n <= 0x7fffffff)) return String(n / 100);
  const whole = Math.trunc(n / 100);
  const fraction = FRACTIONS[n - whole * 100] ?? '';
  return (WHOLE_MS[whole] ?? String(whole)) + fraction;
}

/** Every millisecond of a second as three digits, '000' to '999'. */
const MILLIS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'));

/**
 * Milliseconds since the epoch as text, the same as `String(ms)`. A number that large is no small
 * integer to V8: it has no cached string, and finding its shortest decimal costs about as much as
 * the rest of an access line. From one millisecond to the next only the last three digits change,
 * so the seconds' text is kept for its second and the milliseconds come from a table. (The lines
 * of one millisecond share their whole start: {@link AccessLog} asks once per millisecond.)
 */
export class MillisText {
  private second = Number.NaN;
  private secondText = '';

  of(ms: number): string {
    const second = Math.floor(ms / 1000);
    // Before the epoch's first second, a fraction, or past 2^53: not a second's digits and three more.
    if (!(second >= 1) || !Number.isSafeInteger(ms)) return String(ms);
    if (second !== this.second) {
      this.second = second;
      this.secondText = String(second);
    }
    return this.secondText + MILLIS[ms - second * 1000];
  }
}

/** How every access line ends. */
const END = ',"msg":"request"}\n';
/**
 * The end of an access line with a caller: the caller's fields, then {@link END}. Cached principals
 * are the same object request after request: built once each.
 */
const callerEnd = perObject((p: Principal): string => `,"auth":"${p.type}","user_id":"${p.user.id}","credential_id":"${p.credentialId}"${END}`);

/**
 * The fields of an access line between the request id and `ms`, from the `"` that closes the id to
 * the `:` before `ms`. They take one piece of the line, not seven: V8 joins the pieces as a tree,
 * and each piece costs again when the batch is written out. A route that answers the same way
 * every time (the fast path) builds them once.
 */
export const requestFields = (method: string, url: string, status: number): string => `","method":"${method}","url":${url},"status":${status},"ms":`;

/** What {@link AccessLog} needs of a pino logger: its level, and to hear when it changes. */
export interface LevelSource {
  readonly level: string;
  on(event: 'level-change', listener: (level: string, value: number, previous: string, previousValue: number, source: unknown) => void): unknown;
}

export class AccessLog {
  private readonly bindings: string;
  private pending: string[] = [];
  private readonly remotes = new BoundedMap<string, string>(REMOTE_FIELDS);
  private readonly timeText = new MillisText();
  private startedAt = Number.NaN;
  private started = '';
  private writing: boolean;

  /** `level`: the level the logger starts at, until {@link follow} is given the logger. */
  constructor(
    level: string,
    private readonly destination: DestinationStream,
  ) {
    this.writing = INFO_ENABLED.has(level);
    this.bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  }

  /**
   * Writes lines while `logger`'s level is info or finer, from now on: read once here and again at
   * each of its level changes, rather than through pino's level getter on every request. (Pino also
   * tells a logger's listeners of its children's changes; those do not count.)
   */
  follow(logger: LevelSource): void {
    this.writing = INFO_ENABLED.has(logger.level);
    logger.on('level-change', (level, _value, _previous, _previousValue, source) => {
      if (source === logger) this.writing = INFO_ENABLED.has(level);
    });
  }

  /** The line of a request Fastify answered. */
  write(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.enabled()) return;
    this.line(request.id, requestFields(request.method, urlField(request.url), reply.statusCode), reply.elapsedTime, request.ip, request.principal);
  }

  /** Whether access lines are written at all (LOG_LEVEL info or finer). */
  enabled(): boolean {
    return this.writing;
  }

  /**
   * The line of a request; `fields` are its {@link requestFields}, `ms` the time taken to produce
   * the response. Callers check {@link enabled} first.
   */
  line(id: string, fields: string, ms: number, remote: string | undefined, principal: Principal | null): void {
    const line = this.start(Date.now()) + id + fields + hundredths(ms) + this.remoteField(remote) + (principal ? callerEnd(principal) : END);
    if (this.pending.push(line) === 1) setImmediate(this.flush);
  }

  /** A line's start up to the request id's opening `"`; the lines of one millisecond share it. */
  private start(now: number): string {
    if (now !== this.startedAt) {
      this.startedAt = now;
      this.started = `{"level":30,"time":${this.timeText.of(now)}${this.bindings},"request_id":"`;
    }
    return this.started;
  }

  /**
   * `,"remote":` and the JSON of a client address. A service sees the same few addresses over and
   * over (its proxies, its callers), so each is encoded once; past {@link REMOTE_FIELDS} the oldest goes.
   */
  private remoteField(remote: string | undefined): string {
    if (remote === undefined) return ',"remote":null';
    let field = this.remotes.get(remote);
    if (field === undefined) {
      field = `,"remote":${JSON.stringify(remote)}`;
      this.remotes.set(remote, field);
    }
    return field;
  }

  /** Writes the lines collected so far. Scheduled only by the turn's first line, so never empty. */
  private readonly flush = (): void => {
    const lines = this.pending.join('');
    this.pending = [];
    this.destination.write(lines);
  };
}

/**
 * Where every line goes: stdout, written synchronously (pino's default). The access log already
 * hands it one write per turn of the event loop, so under load one write(2) carries some thirty
 * lines from the main thread. (Asynchronous mode measured worse here: it sends each write through
 * libuv's thread pool and starts the next as soon as one finishes, so it made about six times as
 * many write calls, each with a thread hand-off; see README, Performance.) A line is on its way to
 * the kernel by the end of the turn that produced it, so a killed process loses at most that turn's.
 * A reader that stops draining stdout slows the service down rather than letting memory grow.
 */
export function createLogDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

/**
 * Where the access lines go: stdout too, written synchronously in the same way, but each turn's
 * batch encoded into one reused buffer instead of through pino's destination, which allocates a
 * copy of every batch outside the V8 heap (see {@link FdWriter}). Both write whole batches at
 * once from the main thread, so their lines never interleave.
 */
export function createAccessLogDestination(): DestinationStream {
  return new FdWriter(1);
}
