import { createServer } from 'node:http';

/*
 * Where the traced rz-auth exports its spans: accepts every OTLP/HTTP request and discards it, so
 * that `me-api-token-tracing` pays for sampling, recording and exporting, and nothing waits on a
 * collector. Any path answers 200 (GET /healthz included, for the harness's readiness check).
 */
createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
}).listen(Number(process.env.PORT), '127.0.0.1');
