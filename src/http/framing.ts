import { type IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { validationFailed } from '../errors.js';

/**
 * How many times the header `name` (lower case) appears. `req.headers` keeps only the first of a
 * repeated Host, Authorization or Content-Type, while a proxy in front may act on the last: where
 * the two could disagree, a repeat is refused rather than one of them picked.
 */
export function countHeader(raw: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const header = raw[i];
    // Lowercasing only the names of the right length: every request has a few other headers.
    if (header?.length === name.length && header.toLowerCase() === name) count++;
  }
  return count;
}

/**
 * Whether the request names its host as HTTP/1.1 requires: exactly once (RFC 9112 §3.2 makes a
 * missing or repeated Host a 400). Node's own check is off (`requireHostHeader: false`) because it
 * answers with an empty body and none of the usual headers; this one is refused as a problem.
 */
export function hasOneHost(req: IncomingMessage): boolean {
  const count = countHeader(req.rawHeaders, 'host');
  return count === 1 || (count === 0 && req.httpVersion !== '1.1');
}

/**
 * Whether an answer about to be sent must close the connection because the request's body has not
 * all arrived (a 401, 404 or 415 that needed none of it): kept alive, Node would read and discard
 * whatever the client goes on sending, gigabytes under a huge Content-Length or endless chunks.
 */
export const bodyStillArriving = (req: IncomingMessage): boolean => !req.complete;

/**
 * Whether the request comes with a body: under any Transfer-Encoding (Node's parser refuses one
 * beside a Content-Length), or a Content-Length other than 0.
 */
export function hasBody(req: IncomingMessage): boolean {
  const { headers } = req;
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The server's 'connect' listener. CONNECT asks for a tunnel, which this service never opens; Node
 * hands such a request not to the request listener but to this one, with the bare socket, and
 * without one destroys the socket unanswered. It is answered here like any other request, by
 * `handler` (a method the path does not serve: 405 on an API path, 404 elsewhere), then the
 * connection closes: what follows the request would be the tunnel's bytes, not another request.
 */
export function answerConnect(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    // Node stopped watching the socket: an error on it (a reset) would otherwise be unhandled.
    socket.on('error', () => socket.destroy());
    if (!(socket instanceof Socket)) {
      socket.destroy();
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => {
      res.detachSocket(socket);
      // As Node ends a connection after an answer that closes it; whatever was sent after the
      // request is discarded.
      socket.resume();
      socket.destroySoon();
    });
    handler(req, res);
  };
}

export const badHost = () => validationFailed([{ field: 'host', message: 'must be sent exactly once' }], 'The request is not valid HTTP: send exactly one Host header.');
