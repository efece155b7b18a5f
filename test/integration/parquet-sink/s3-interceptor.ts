/**
 * A loopback HTTP proxy in front of s3rver that lets a test act at an exact moment of
 * an S3 conversation: `onRequest` sees each request's method and URL before it is
 * forwarded and may hold it (never answered: the client waits, as it would on a slow
 * network). Crash tests kill the worker from there, e.g. when the first UploadPart of
 * a multipart upload arrives, so "killed mid-upload" is not a matter of timing.
 *
 * stop() closes every connection, held ones included.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export type Verdict = 'forward' | 'hold';

export interface S3Interceptor {
  endpoint: string;
  /** Requests seen, as "METHOD path?query", in arrival order. */
  seen: string[];
  stop(): Promise<void>;
}

export async function useS3Interceptor(
  target: string,
  onRequest: (req: IncomingMessage) => Verdict,
): Promise<S3Interceptor> {
  const upstream = new URL(target);
  const seen: string[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (onRequest(req) === 'hold') {
      req.resume();
      held.push(res);
      return;
    }
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  const interceptor: S3Interceptor = {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return stopped;
    },
  };
  onTestFinished(() => interceptor.stop());
  return interceptor;
}

/** True for S3's UploadPart (PUT ?partNumber=..&uploadId=..). */
export function isUploadPart(req: IncomingMessage): boolean {
  return req.method === 'PUT' && /[?&]uploadId=/.test(req.url ?? '');
}
