import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as OTLP/JSON carries it (ids in hex), with its scope and resource. */
export interface SunkSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly scope: string;
  readonly resource: Record<string, unknown>;
  /** The span as received, for scanning. */
  readonly raw: string;
}

type KeyValues = Array<{ key: string; value: Record<string, unknown> }> | undefined;
const flat = (list: KeyValues): Record<string, unknown> => Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));

interface Export {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValues };
    scopeSpans?: Array<{ scope?: { name?: string }; spans?: Array<Omit<SunkSpan, 'attributes' | 'scope' | 'resource' | 'raw'> & { attributes?: KeyValues }> }>;
  }>;
}

/** An OTLP/HTTP JSON receiver on loopback (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): keeps every span. */
export async function startOtlpSink(): Promise<{ url: string; spans: SunkSpan[]; bodies: string[]; close(): Promise<void> }> {
  const spans: SunkSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      for (const rs of (JSON.parse(body) as Export).resourceSpans ?? []) {
        const resource = flat(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) spans.push({ ...span, attributes: flat(span.attributes), scope: ss.scope?.name ?? '', resource, raw: JSON.stringify(span) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
