/**
 * The most bytes read of any answer from rz-auth: an introspection answer is a few hundred bytes
 * and its key set a few KiB. A URL that points somewhere else (a proxy's page, a misconfigured
 * upstream) must not make a service buffer an answer of any size.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

export type Fetch = typeof globalThis.fetch;

/**
 * `fetchFn(url, init)`, given up with the abort's reason once `init.signal` aborts, whether the
 * fetch heeds its signal or not (a custom one may not); an answer that comes after is discarded.
 */
export function fetchUntil(fetchFn: Fetch, url: string, init: RequestInit & { readonly signal: AbortSignal }): Promise<Response> {
  const { signal } = init;
  return new Promise<Response>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    const settle = () => signal.removeEventListener('abort', abort);
    let answer: Promise<Response>;
    try {
      answer = fetchFn(url, init);
    } catch (error) {
      settle();
      return reject(error);
    }
    answer.then(
      (res) => {
        settle();
        if (signal.aborted) discard(res);
        else resolve(res);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

/** Drops an unread answer's body without waiting: a body's cancel may never settle. */
export const discard = (res: Response): void => void res.body?.cancel().catch(() => undefined);

/**
 * The chunks of `body` until it ends; once `signal` aborts, the read in progress ends and the
 * abort's reason is thrown. The abort of a fetch alone is not enough: undici can leave a pending
 * read of an aborted answer's body unsettled for ever, and a custom fetch may not tie its body to
 * the signal at all. Cancelling the reader settles that read whatever the body does.
 */
export async function* chunksOf(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      signal.throwIfAborted();
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) return;
      yield value;
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    // Leaving early (a bound passed, an error) cancels the body: nothing more is read.
    void reader.cancel().catch(() => undefined);
  }
}

/**
 * The body of `res` as text, refused past {@link MAX_ANSWER_BYTES} whatever Content-Length says,
 * and given up when `signal` (the request's own) aborts.
 */
export async function readBounded(res: Response, signal: AbortSignal, max = MAX_ANSWER_BYTES): Promise<string> {
  if (res.body === null) return '';
  if (Number(res.headers.get('content-length')) > max) {
    discard(res);
    throw new Error(`${res.url} answered more than ${max} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunksOf(res.body, signal)) {
    size += chunk.byteLength;
    if (size > max) throw new Error(`${res.url} answered more than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `res` with its body read under the bound, for code that reads the body itself (jose's key set fetch). */
export async function bounded(res: Response, signal: AbortSignal): Promise<Response> {
  const text = await readBounded(res, signal);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}
