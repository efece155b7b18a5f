/**
 * A loopback HTTP server in front of s3rver that records every request with its
 * headers, so tests check on the wire what the S3 client sent. It serves both as a
 * reverse proxy (the store's endpoint) and as a forward HTTP proxy (s3.proxy.url:
 * absolute-form request targets, Proxy-Authorization). CONNECT tunnels are recorded
 * and refused: nothing leaves the machine. `fail` answers matching requests with
 * S3's AccessDenied (true) or InternalError (500) instead of forwarding them.
 */
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  /** As received: a path, or an absolute URL when used as a forward proxy. */
  url: string;
  headers: IncomingHttpHeaders;
}

export interface RecordingProxy {
  endpoint: string;
  seen: Seen[];
  close(): Promise<void>;
}

export async function recordingProxy(
  target: string,
  fail: (s: Seen) => boolean | 500 = () => false,
): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    seen.push(s);
    const failure = fail(s);
    if (failure !== false) {
      const [status, code] = failure === 500 ? [500, 'InternalError'] : [403, 'AccessDenied'];
      req.resume();
      res.writeHead(status, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>refused by the test</Message></Error>`,
      );
      return;
    }
    const path = s.url.startsWith('http') ? new URL(s.url).pathname + new URL(s.url).search : s.url;
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.on('connect', (req, socket) => {
    seen.push({ method: 'CONNECT', url: req.url ?? '', headers: req.headers });
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
