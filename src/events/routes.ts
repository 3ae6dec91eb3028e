import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import { type Http, serviceOf } from '../api/route.js';
import { HEARTBEAT_HEADER } from './format.js';
import type { EventHub, Resume } from './hub.js';

const EventHeaders = Type.Object({
  // Any value is taken: an id this service never issued gets a reset, never a 4xx, since a browser's
  // EventSource resends whatever id it last saw and gives up reconnecting on a 4xx (WHATWG HTML §9.2.3).
  'last-event-id': Type.Optional(
    Type.String({
      // The headers' own limit (16 KiB, else 431) comes first: this bound is never what refuses one.
      maxLength: 16_384,
      description:
        'Resume after this event id (what EventSource sends on reconnection). An id the service no longer holds, or never issued (whatever its form: text, negative, huge), starts the stream with `event: reset`; an empty one counts as none.',
      examples: ['1234'],
    }),
  ),
});

const DESCRIPTION = `Needs a service credential (\`rzs_\`). A stream (\`text/event-stream\`) of the changes that can make a cached answer about a token wrong, from every instance: each \`id: <monotonic id>\`, \`event: <type>\`, \`committed_at: <milliseconds since the epoch>\` (when the change was committed, to measure how long it took to arrive; absent on changes recorded by an older version, and on \`reset\`), \`data: <JSON>\`.

- \`token.revoked\` \`{ token_id, token_type, user_id, app_id? }\`
- \`token.updated\` \`{ token_id, scopes, derivable? }\` (\`derivable: false\` when derivation was turned off: drop the token's children too)
- \`session.revoked\` \`{ session_id, user_id }\`
- \`user.deleted\` \`{ user_id }\`
- \`app.deleted\` \`{ app_id, user_id }\`
- \`keys.changed\` \`{}\`
- \`reset\` \`{}\`: drop every cache (what happened cannot be told event by event).

The stream opens with \`retry: 1000\` and, when it starts from now, \`id: <position>\` alone; a comment line comes every \`EVENTS_HEARTBEAT_MS\` (5 s by default, at most 15 s), an interval the \`RZ-Heartbeat-Ms\` response header states: a client that hears no byte for longer (plus a margin) should take the connection as stalled, stop trusting what it keeps correct, and reconnect. Send \`Last-Event-ID\` to resume. At most \`EVENTS_STREAMS_PER_CREDENTIAL\` streams per credential per instance (429 past it); a client that stops reading is disconnected.`;

/** rz-auth's event ids: whole numbers of at most 15 digits, so every one is a safe integer. */
const EVENT_ID = /^[0-9]{1,15}$/;

/** Where a stream resumes: from now (no id), after an id of ours, or nowhere we know (a reset). */
function resumeOf(header: string | undefined): Resume {
  if (header === undefined || header === '') return null;
  // Length first: the header may be as long as the header limit allows.
  return header.length <= 15 && EVENT_ID.test(header) ? Number(header) : 'unknown';
}

/** `GET /api/events`, for the platform's services. */
export function eventRoutes(app: Http, hub: EventHub): void {
  // Long-lived responses would hold a graceful shutdown open: they end first, and clients reconnect elsewhere.
  app.addHook('preClose', (done) => {
    hub.close();
    done();
  });

  app.get('/api/events', {
    ...operation({
      method: 'GET',
      operationId: 'streamEvents',
      tags: ['platform'],
      summary: 'Stream revocations and other changes (server-sent events)',
      description: DESCRIPTION,
      // Opened apart from introspection's budget: a service whose introspections spent it (a flood
      // of made-up tokens) can still reconnect the stream that keeps its cache correct.
      auth: { service: true, counter: 'events' },
      headers: EventHeaders,
      success: {
        200: {
          description: 'The event stream, until the client or the instance closes it.',
          mediaType: 'text/event-stream',
          // A stream as the handler sends it, a string as the document describes it.
          schema: Type.Unsafe<Readable>({
            type: 'string',
            maxLength: 1_000_000_000,
            description: 'Messages of `id:`, `event:`, `committed_at:` and `data:` lines, each ended by a blank line, and comment lines (`:`).',
            examples: ['id: 42\nevent: session.revoked\ncommitted_at: 1796601600123\ndata: {"session_id":"0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90","user_id":"5f0c6a9e-3b1d-4f7a-8e2c-9d4b1a7c3e60"}\n\n'],
          }),
        },
      },
    }),
    // A HEAD request would open a stream that sends nothing: 405.
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      const stream = await hub.open(serviceOf(request).credentialId, reply.raw, resumeOf(request.headers['last-event-id']));
      // A client that closes its sending side keeps its answer (src/app.ts), but this answer never
      // ends: here the client's FIN ends the stream, as a full close does.
      const { socket } = request.raw;
      if (socket.readableEnded) reply.raw.destroy();
      else socket.once('end', () => reply.raw.destroy());
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        // One stream per connection: when it ends, so does the connection.
        .header('connection', 'close')
        // Proxies that buffer responses (nginx) would hold events back.
        .header('x-accel-buffering', 'no')
        .header(HEARTBEAT_HEADER, String(hub.heartbeatMs))
        .send(stream.readable);
    },
  });
}
