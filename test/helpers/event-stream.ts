/** One message of a server-sent event stream, as its fields arrived. */
export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  /** When the change was committed, in milliseconds since the epoch (docs/revocation-metrics.md). */
  readonly committed_at?: string;
  readonly data?: string;
  readonly retry?: string;
  readonly comments: readonly string[];
}

/** GET /api/events over real HTTP, read message by message as the client of a platform service would. */
export interface EventReader {
  readonly status: number;
  readonly headers: Headers;
  /** The body of a refusal (a problem), when status is not 200. */
  readonly problem: unknown;
  /** The next message (comments and id-only messages included); rejects after `timeoutMs`, or when the stream ended. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** The next message that is an event (has `event`), skipping comments and id-only messages. */
  nextEvent(timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server has ended the stream. */
  readonly ended: Promise<void>;
  /** Every byte received so far. */
  text(): string;
  close(): void;
}

function parse(block: string): SseMessage {
  const fields: Record<string, string> = {};
  const comments: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comments.push(line.slice(1).trim());
    else {
      const colon = line.indexOf(':');
      fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
    }
  }
  return { ...fields, comments };
}

export async function openEvents(base: string, token: string, headers: Record<string, string> = {}): Promise<EventReader> {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const problem = res.status === 200 ? null : ((await res.json()) as unknown);
  const decoder = new TextDecoder();
  let buffer = '';
  let all = '';
  const queue: SseMessage[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const ended = (async () => {
    if (!res.body) return;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        all += text;
        buffer += text;
        let split: number;
        while ((split = buffer.indexOf('\n\n')) !== -1) {
          queue.push(parse(buffer.slice(0, split)));
          buffer = buffer.slice(split + 2);
        }
        wake?.();
      }
    } catch {
      // Aborted by close(), or cut by the server.
    } finally {
      done = true;
      wake?.();
    }
  })();

  const next = async (timeoutMs = 5000): Promise<SseMessage> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0) {
      if (done) throw new Error(`the stream ended; received: ${JSON.stringify(all)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${timeoutMs} ms; received: ${JSON.stringify(all)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return queue.shift() as SseMessage;
  };
  return {
    status: res.status,
    headers: res.headers,
    problem,
    next,
    async nextEvent(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const message = await next(Math.max(1, deadline - Date.now()));
        if (message.event !== undefined) return message;
      }
    },
    ended,
    text: () => all,
    close: () => controller.abort(),
  };
}
