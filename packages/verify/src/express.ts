import type { Caller } from './caller.js';
import { VerifyError } from './errors.js';
import { authorizationOf } from './header.js';
import { enforce, type Requirement } from './requirement.js';
import { refusalBody, refusalHeaders } from './respond.js';
import type { VerifierCore } from './verifier.js';

interface RequestLike {
  readonly headers: { readonly authorization?: string | undefined };
  readonly rawHeaders?: readonly string[];
  /** Express's client address, after its `trust proxy` setting. */
  readonly ip?: string | undefined;
  /** Connect's: the socket's peer. */
  readonly socket?: { readonly remoteAddress?: string | undefined };
  caller?: Caller;
}

interface ResponseLike {
  statusCode: number;
  /** Node's: true once another middleware (a request timeout) has answered. */
  readonly headersSent?: boolean;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

/** A plain `(req, res, next)` middleware, for Express, Connect or anything of their shape. */
export type Middleware = (req: RequestLike, res: ResponseLike, next: (error?: unknown) => void) => void;

/**
 * Sets `req.caller`, or answers the refusal itself; any other failure goes to `next(error)`. What
 * `next()` or the refusal throws goes to `next(error)` too, as Express does with a handler's throw:
 * an error left in the promise would be an unhandled rejection, which ends the service's process.
 */
export function expressMiddlewareFor(core: VerifierCore, requirement: Requirement): Middleware {
  return (req, res, next) => {
    const fail = (error: unknown) => {
      if (res.headersSent) return;
      try {
        next(error);
      } catch {
        // The framework's own error path threw: nothing is left to hand it to.
      }
    };
    core
      .verify(authorizationOf(req), req.ip ?? req.socket?.remoteAddress)
      .then((caller) => {
        enforce(core, caller, requirement);
        return caller;
      })
      .then(
        (caller) => {
          req.caller = caller;
          next();
        },
        (error: unknown) => refuse(res, error, next),
      )
      .catch(fail);
  };
}

function refuse(res: ResponseLike, error: unknown, next: (error?: unknown) => void): void {
  if (!(error instanceof VerifyError)) {
    next(error);
    return;
  }
  // Answered already (a request timeout): the refusal has no one left to tell.
  if (res.headersSent) return;
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(refusalHeaders(error))) res.setHeader(name, value);
  res.end(refusalBody(error));
}
