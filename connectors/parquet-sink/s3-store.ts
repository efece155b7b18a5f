/**
 * An S3 bucket (or MinIO, s3rver, any S3-compatible store) as the object store.
 *
 * Writes: objects up to `s3.part.size` bytes go in one PutObject; larger ones in a
 * multipart upload of `s3.part.size` parts. S3 shows an object only when PutObject or
 * CompleteMultipartUpload succeeds, so no partial object is ever visible; a failed
 * multipart upload is aborted so its parts do not linger (and cost) in the bucket.
 *
 * Retries: each S3 call is tried `s3.part.retries` + 1 times with exponential back-off
 * from `s3.retry.backoff.ms` (doubling, capped at 20 s, with jitter so tasks do not
 * retry in lockstep) when the failure is transient: network errors, 5xx, throttling.
 * The SDK's own retries are turned off so the two do not multiply. Permanent failures
 * (no such bucket, access denied, bad credentials) fail at once with a message that
 * names the bucket, the key and S3's error code.
 *
 * Credentials come from the SDK's default chain (env, shared config/credentials files,
 * SSO, web identity, ECS/EC2 metadata) unless given explicitly or named by
 * s3.credentials.provider.class (s3-credentials.ts).
 *
 * Object metadata (ObjectInfo.metadata: the commit group of row-format files,
 * recovery.ts) is S3 user metadata, sent with PutObject or CreateMultipartUpload, so
 * it appears with the object and never without it; readMetadata() is a HeadObject.
 *
 * Security features (s3-config.ts): server-side encryption headers and the canned ACL
 * go on PutObject and CreateMultipartUpload; SSE-C's key and its MD5 also on each
 * UploadPart and on every GetObject (recovery reads footers, and S3 refuses to read an
 * SSE-C object without its key). s3.http.send.expect.continue sends Expect: 100-continue
 * on every request with a body, except through a proxy to an http:// endpoint (see the
 * constructor). Tagging is a PutObjectTagging after the object is
 * written, as Confluent does, so s3.object.behavior.on.tagging.error=ignore can keep a
 * file whose tags S3 refused: the file is durable either way. A proxy replaces the
 * SDK's agents with HTTP(S) proxy agents; every request goes through it.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { getLogger } from '../../src/connect/api/index.ts';
import { type ObjectInfo, type ObjectStore, StoreError } from './object-store.ts';
import type { S3Features, SseSettings } from './s3-config.ts';
import { credentialsProvider } from './s3-credentials.ts';

const log = getLogger('connectors.parquet-sink');

export interface S3StoreSettings {
  bucket: string;
  region: string;
  /** Endpoint override (MinIO, s3rver); empty for AWS. */
  endpoint: string;
  pathStyle: boolean;
  partSize: number;
  retries: number;
  backoffMs: number;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Encryption, ACL, tagging, proxy, credentials provider; none of them when absent. */
  features?: S3Features;
  /** Injected for tests: how to wait between retries. */
  sleep?: (ms: number) => Promise<void>;
}

const MAX_BACKOFF_MS = 20_000;
const TRANSIENT_CODES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'InternalError',
  'ServiceUnavailable',
]);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

export class S3Store implements ObjectStore {
  readonly description: string;
  private readonly client: S3Client;
  private readonly sleep: (ms: number) => Promise<void>;
  /** SSE and ACL headers of PutObject and CreateMultipartUpload. */
  private readonly writeParams: Record<string, string>;
  /** SSE-C's key headers, for UploadPart and GetObject too. */
  private readonly customerKey: Record<string, string>;

  constructor(private readonly s: S3StoreSettings) {
    this.description = `s3://${s.bucket}${s.endpoint ? ` at ${s.endpoint}` : ''} (region ${s.region})`;
    const f = s.features;
    const config: S3ClientConfig = {
      region: s.region,
      // Transfer Acceleration exists only for virtual-hosted addressing.
      forcePathStyle: s.pathStyle && !f?.accelerate,
      maxAttempts: 1,
      // http-proxy-agent writes a request's headers again after a 100 Continue, which
      // breaks it, so through a proxy to an http:// endpoint no Expect is sent (https
      // endpoints go through a CONNECT tunnel and keep it).
      expectContinueHeader:
        (f?.expectContinue ?? true) && !(f?.proxy && s.endpoint.startsWith('http:')),
    };
    if (s.endpoint) config.endpoint = s.endpoint;
    if (f?.accelerate) config.useAccelerateEndpoint = true;
    if (s.credentials) config.credentials = s.credentials;
    else if (f && f.credentials.kind !== 'default') {
      config.credentials = credentialsProvider(f.credentials, s.region);
    }
    if (f?.proxy) {
      const url = proxyUrl(f.proxy);
      config.requestHandler = {
        httpAgent: new HttpProxyAgent(url, { keepAlive: true }),
        httpsAgent: new HttpsProxyAgent(url, { keepAlive: true }),
      };
    }
    this.client = new S3Client(config);
    this.writeParams = writeParams(f);
    this.customerKey = customerKeyParams(f?.sse);
    this.sleep = s.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /**
   * A listing rather than HeadBucket: recovery needs list permission anyway, and a
   * listing's error body names the problem (HEAD answers carry no body). One page of
   * the default size, not MaxKeys=1: s3rver answers every truncated listing with
   * InternalError on Node 17+ (its continuation tokens use DES, which OpenSSL 3 no
   * longer offers), and a one-page listing costs S3 the same request.
   */
  async check(): Promise<void> {
    await this.call('list', '', () =>
      this.client.send(new ListObjectsV2Command({ Bucket: this.s.bucket })),
    );
  }

  async put(key: string, bytes: Uint8Array, info?: ObjectInfo): Promise<void> {
    if (bytes.byteLength <= this.s.partSize) {
      await this.call('write', key, () =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.s.bucket,
            Key: key,
            Body: bytes,
            ...this.writeParams,
            ...(info?.metadata ? { Metadata: { ...info.metadata } } : {}),
          }),
        ),
      );
    } else {
      await this.putMultipart(key, bytes, info?.metadata);
    }
    const tagging = this.s.features?.tagging;
    if (tagging && info) await this.tag(key, info, tagging);
  }

  /** Confluent's tags (TopicPartitionWriter.tagFile) plus the configured extras. */
  private async tag(
    key: string,
    info: ObjectInfo,
    tagging: NonNullable<S3Features['tagging']>,
  ): Promise<void> {
    const tags: Record<string, string> = {
      startOffset: String(info.startOffset),
      endOffset: String(info.endOffset),
      recordCount: String(info.recordCount),
      ...tagging.extra,
    };
    try {
      await this.call('tag', key, () =>
        this.client.send(
          new PutObjectTaggingCommand({
            Bucket: this.s.bucket,
            Key: key,
            Tagging: { TagSet: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
          }),
        ),
      );
    } catch (e) {
      if (tagging.onError === 'fail') throw e;
      log.warn(
        { file: key, error: (e as Error).message },
        `cannot tag ${key} (s3.object.behavior.on.tagging.error=ignore): ${(e as Error).message}`,
      );
    }
  }

  private async putMultipart(
    key: string,
    bytes: Uint8Array,
    metadata: Readonly<Record<string, string>> | undefined,
  ): Promise<void> {
    const created = await this.call('start a multipart upload of', key, () =>
      this.client.send(
        new CreateMultipartUploadCommand({
          Bucket: this.s.bucket,
          Key: key,
          ...this.writeParams,
          ...(metadata ? { Metadata: { ...metadata } } : {}),
        }),
      ),
    );
    const uploadId = created.UploadId as string;
    try {
      const parts: Array<{ ETag: string; PartNumber: number }> = [];
      for (let offset = 0, n = 1; offset < bytes.byteLength; offset += this.s.partSize, n++) {
        const body = bytes.subarray(offset, Math.min(offset + this.s.partSize, bytes.byteLength));
        const part = await this.call(`upload part ${n} of`, key, () =>
          this.client.send(
            new UploadPartCommand({
              Bucket: this.s.bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: n,
              Body: body,
              ...this.customerKey,
            }),
          ),
        );
        parts.push({ ETag: part.ETag as string, PartNumber: n });
      }
      await this.call('complete the multipart upload of', key, () =>
        this.client.send(
          new CompleteMultipartUploadCommand({
            Bucket: this.s.bucket,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
          }),
        ),
      );
    } catch (e) {
      // Best effort: if the abort fails too, a bucket lifecycle rule for incomplete
      // uploads is the backstop; the original error is the one worth reporting.
      await this.client
        .send(
          new AbortMultipartUploadCommand({ Bucket: this.s.bucket, Key: key, UploadId: uploadId }),
        )
        .catch(() => undefined);
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.call('list', prefix, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.s.bucket,
            Prefix: prefix,
            ContinuationToken: token,
          }),
        ),
      );
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async readTail(key: string, length: number): Promise<Uint8Array> {
    const bytes = await this.read(key, `bytes=-${length}`);
    // s3rver answers a suffix range with one byte too many; keep exactly the tail.
    return bytes.length > length ? bytes.subarray(bytes.length - length) : bytes;
  }

  async get(key: string): Promise<Uint8Array> {
    return this.read(key, undefined);
  }

  /** User metadata (x-amz-meta-*), by a HeadObject; SSE-C objects need their key for it too. */
  async readMetadata(key: string): Promise<Record<string, string>> {
    const head = await this.call('read the metadata of', key, () =>
      this.client.send(
        new HeadObjectCommand({ Bucket: this.s.bucket, Key: key, ...this.customerKey }),
      ),
    );
    return { ...head.Metadata };
  }

  private async read(key: string, range: string | undefined): Promise<Uint8Array> {
    return this.call('read', key, async () => {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.s.bucket,
          Key: key,
          Range: range,
          ...this.customerKey,
        }),
      );
      return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
    });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  /** Run one S3 call with retries; failures become StoreErrors naming what failed. */
  private async call<T>(what: string, key: string, fn: () => Promise<T>): Promise<T> {
    let delay = this.s.backoffMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const transient = isTransient(e);
        if (!transient || attempt >= this.s.retries) {
          const target = key ? `s3://${this.s.bucket}/${key}` : `s3://${this.s.bucket}`;
          const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : '';
          throw new StoreError(
            `cannot ${what} ${target}${tries}: ${describe(e)}${this.s.endpoint ? ` (endpoint ${this.s.endpoint})` : ''}`,
            transient,
            { cause: e },
          );
        }
        await this.sleep(Math.min(delay, MAX_BACKOFF_MS) * (0.5 + Math.random() / 2));
        delay *= 2;
      }
    }
  }
}

function writeParams(f: S3Features | undefined): Record<string, string> {
  const params: Record<string, string> = { ...customerKeyParams(f?.sse) };
  if (f?.sse.kind === 's3') params.ServerSideEncryption = 'AES256';
  if (f?.sse.kind === 'kms') {
    params.ServerSideEncryption = f.sse.algorithm;
    if (f.sse.keyId) params.SSEKMSKeyId = f.sse.keyId;
  }
  if (f?.cannedAcl) params.ACL = f.cannedAcl;
  return params;
}

/** The SDK adds the key's MD5 (x-amz-server-side-encryption-customer-key-md5) itself. */
function customerKeyParams(sse: SseSettings | undefined): Record<string, string> {
  return sse?.kind === 'customer'
    ? { SSECustomerAlgorithm: 'AES256', SSECustomerKey: sse.key }
    : {};
}

/** The proxy URL with s3.proxy.user and s3.proxy.password over any credentials in it. */
function proxyUrl(p: NonNullable<S3Features['proxy']>): string {
  const url = new URL(p.url);
  if (p.user !== undefined) url.username = p.user;
  if (p.password !== undefined) url.password = p.password;
  return url.toString();
}

function isTransient(e: unknown): boolean {
  const err = e as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = err.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  if (err.name && TRANSIENT_CODES.has(err.name)) return true;
  return err.code !== undefined && NETWORK_CODES.has(err.code);
}

function describe(e: unknown): string {
  const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = err.$metadata?.httpStatusCode;
  // HeadBucket answers have no body, so the SDK's message is only the status; say it.
  if (err.name === 'NotFound' || (status === 404 && err.name === 'Unknown')) {
    return 'NoSuchBucket: the bucket does not exist';
  }
  if (status === 403 && (err.name === 'Forbidden' || err.name === 'Unknown')) {
    return 'AccessDenied: the credentials may not use this bucket';
  }
  const code = err.name && err.name !== 'Error' ? `${err.name}: ` : '';
  return `${code}${err.message ?? String(e)}${status ? ` (HTTP ${status})` : ''}`;
}
