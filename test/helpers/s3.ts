/**
 * A private S3-compatible server for tests: `s3rver` on a free loopback port, storing
 * objects in a fresh temporary folder, with an @aws-sdk/client-s3 client configured
 * for it (path-style addressing, s3rver's fixed credentials S3RVER/S3RVER).
 *
 *   const s3 = await startS3({ buckets: ['lake'] });
 *   try { ... s3.client, s3.endpoint ... } finally { await s3.stop(); }
 *
 * stop() destroys the client, closes every open socket (the SDK keeps connections
 * alive, which would otherwise hold the server open) and deletes the folder. A
 * failure while starting tears down what was started before rethrowing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const S3RVER_REGION = 'us-east-1';

export interface TestS3 {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  client: S3Client;
  /** s3rver's storage folder (objects live under <directory>/<bucket>/). */
  directory: string;
  stop(): Promise<void>;
}

function loadS3rver(): S3rverClass {
  try {
    return createRequire(import.meta.url)('s3rver') as S3rverClass;
  } catch (e) {
    throw new Error(
      `S3 tests need the s3rver package (a dev dependency): run npm ci. ${(e as Error).message}`,
    );
  }
}

export async function startS3(options: { buckets?: string[] } = {}): Promise<TestS3> {
  const S3rver = loadS3rver();
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (e) {
    rmSync(directory, { recursive: true, force: true });
    throw new Error(`could not start s3rver: ${(e as Error).message}`, { cause: e });
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  const client = new S3Client({
    endpoint,
    region: S3RVER_REGION,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
  let stopped = false;
  return {
    endpoint,
    region: S3RVER_REGION,
    credentials: S3RVER_CREDENTIALS,
    client,
    directory,
    async stop() {
      if (stopped) return;
      stopped = true;
      client.destroy();
      server.httpServer?.closeAllConnections();
      await server.close().catch(() => undefined);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
