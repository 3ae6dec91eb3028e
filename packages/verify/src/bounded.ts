/**
 * The most bytes read of any answer from rz-auth: an introspection answer is a few hundred bytes
 * and its key set a few KiB. A URL that points somewhere else (a proxy's page, a misconfigured
 * upstream) must not make a service buffer an answer of any size.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The body of `res` as text, refused past {@link MAX_ANSWER_BYTES} whatever Content-Length says. */
export async function readBounded(res: Response, max = MAX_ANSWER_BYTES): Promise<string> {
  if (res.body === null) return '';
  if (Number(res.headers.get('content-length')) > max) {
    await res.body.cancel();
    throw new Error(`${res.url} answered more than ${max} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // Leaving the loop early cancels the stream: nothing more is read.
    if (size > max) throw new Error(`${res.url} answered more than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `res` with its body read under the bound, for code that reads the body itself (jose's key set fetch). */
export async function bounded(res: Response): Promise<Response> {
  const text = await readBounded(res);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}
