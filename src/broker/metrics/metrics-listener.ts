/**
 * The broker's metrics listener (`metrics.listener`, off by default): a plain HTTP
 * server answering GET /metrics with the Prometheus text exposition and 404 to
 * anything else. It runs on the broker's event loop (the broker thread when the
 * broker is embedded in a worker); `close()` stops it and ends its connections.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseListener } from '../../config/validators.ts';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsListener {
  /** http://host:port as bound. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(
  listener: string,
  scrape: () => Promise<string>,
): Promise<MetricsListener> {
  const parsed = parseListener(listener);
  if (parsed === undefined || parsed.protocol !== 'http')
    throw new Error(`metrics.listener ${listener}: expected http://host:port`);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    scrape().then(
      (text) => response.writeHead(200, { 'content-type': CONTENT_TYPE }).end(text),
      (e: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(e)}\n`),
    );
  });
  const host = parsed.host === '' ? '0.0.0.0' : parsed.host.replace(/^\[|\]$/g, '');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(parsed.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${parsed.host === '' ? 'localhost' : parsed.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
