/**
 * Confluent's S3 security and transport keys, checked on the wire: each test configures
 * the store from connector keys, writes or reads through a recording proxy in front of
 * s3rver, and looks at the headers S3 received.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectTaggingCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, parseConfig, RetriableException } from '../../../src/connect/api/index.ts';
import { startS3, type TestS3 } from '../../../test/helpers/s3.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { parquetSinkConfigDefs, validateSinkConfig } from '../config.ts';
import { ParquetSinkTask } from '../parquet-sink-task.ts';
import { toS3Features } from '../s3-config.ts';
import { S3Store } from '../s3-store.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { orderRecords, sinkConfig, T0, taskContext } from './fixtures.ts';
import { type RecordingProxy, recordingProxy, type Seen } from './recording-proxy.ts';

const BUCKET = 'secure';
const MiB = 1024 * 1024;
const CUSTOMER_KEY = Buffer.alloc(32, 0x5a).toString('base64');

let s3: TestS3;
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  s3 = await startS3({ buckets: [BUCKET] });
});
afterAll(async () => {
  await s3?.stop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function proxy(fail?: (s: Seen) => boolean | 500): Promise<RecordingProxy> {
  const p = await recordingProxy(s3.endpoint, fail);
  cleanups.push(() => p.close());
  return p;
}

/** A store configured from connector keys, as the task configures it. */
function store(keys: Record<string, string>, endpoint: string): S3Store {
  const raw = {
    's3.bucket.name': BUCKET,
    's3.region': s3.region,
    'store.url': endpoint,
    'flush.size': '10',
    'aws.access.key.id': s3.credentials.accessKeyId,
    'aws.secret.access.key': s3.credentials.secretAccessKey,
    's3.part.size': String(5 * MiB),
    ...keys,
  };
  const parsed = parseConfig(parquetSinkConfigDefs, raw);
  expect(parsed.errors).toEqual([]);
  expect(validateSinkConfig(parsed.values)).toEqual([]);
  const v = parsed.values;
  const credentials = toS3Features(v).credentials;
  const st = new S3Store({
    bucket: BUCKET,
    region: s3.region,
    endpoint: (v['store.url'] as string) || '',
    pathStyle: true,
    partSize: 5 * MiB,
    retries: 0,
    backoffMs: 1,
    features: { ...toS3Features(v), credentials },
    sleep: async () => undefined,
  });
  cleanups.push(() => st.close());
  return st;
}

const small = new Uint8Array([1, 2, 3]);
const large = new Uint8Array(5 * MiB + 1024).fill(7);

const isPut = (s: Seen) => s.method === 'PUT' && !/[?&](uploadId|tagging)/.test(s.url);
const isCreateMultipart = (s: Seen) => s.method === 'POST' && /[?&]uploads/.test(s.url);
const isUploadPart = (s: Seen) => s.method === 'PUT' && /[?&]uploadId=/.test(s.url);
const isGet = (s: Seen) => s.method === 'GET' && !/[?&](list-type|tagging)/.test(s.url);

describe('server-side encryption on the wire', () => {
  it('s3.ssea.name=AES256 asks for SSE-S3 on single and multipart uploads', async () => {
    const p = await proxy();
    const st = store({ 's3.ssea.name': 'aes256' }, p.endpoint);

    await st.put('a/small', small);
    await st.put('a/large', large);

    for (const s of [p.seen.find(isPut), p.seen.find(isCreateMultipart)]) {
      expect(s?.headers['x-amz-server-side-encryption']).toBe('AES256');
    }
  });

  it('s3.ssea.name=aws:kms with s3.sse.kms.key.id names the key on single and multipart uploads', async () => {
    const p = await proxy();
    const st = store(
      { 's3.ssea.name': 'aws:kms', 's3.sse.kms.key.id': 'arn:aws:kms:k1' },
      p.endpoint,
    );

    await st.put('b/small', small);
    await st.put('b/large', large);

    for (const s of [p.seen.find(isPut), p.seen.find(isCreateMultipart)]) {
      expect(s?.headers['x-amz-server-side-encryption']).toBe('aws:kms');
      expect(s?.headers['x-amz-server-side-encryption-aws-kms-key-id']).toBe('arn:aws:kms:k1');
    }
  });

  it('s3.sse.customer.key sends the key and its MD5 on every upload, part and read', async () => {
    const p = await proxy();
    const st = store({ 's3.ssea.name': 'AES256', 's3.sse.customer.key': CUSTOMER_KEY }, p.endpoint);

    await st.put('c/small', small);
    await st.put('c/large', large);
    await st.readTail('c/large', 8);
    await st.get('c/small');

    const md5 = createHash('md5').update(Buffer.from(CUSTOMER_KEY, 'base64')).digest('base64');
    const requests = [
      p.seen.find(isPut),
      p.seen.find(isCreateMultipart),
      ...p.seen.filter(isUploadPart),
      ...p.seen.filter(isGet),
    ];
    expect(requests).toHaveLength(6);
    for (const s of requests) {
      expect(s?.headers['x-amz-server-side-encryption-customer-algorithm']).toBe('AES256');
      expect(s?.headers['x-amz-server-side-encryption-customer-key']).toBe(CUSTOMER_KEY);
      expect(s?.headers['x-amz-server-side-encryption-customer-key-md5']).toBe(md5);
      expect(s?.headers['x-amz-server-side-encryption']).toBeUndefined();
    }
  });
});

describe('ACL, tagging, Expect and proxy on the wire', () => {
  it('s3.acl.canned goes on single and multipart uploads', async () => {
    const p = await proxy();
    const st = store({ 's3.acl.canned': 'bucket-owner-full-control' }, p.endpoint);

    await st.put('d/small', small);
    await st.put('d/large', large);

    for (const s of [p.seen.find(isPut), p.seen.find(isCreateMultipart)]) {
      expect(s?.headers['x-amz-acl']).toBe('bucket-owner-full-control');
    }
  });

  it("s3.object.tagging tags each file with Confluent's startOffset, endOffset and recordCount, plus the extra pairs", async () => {
    const p = await proxy();
    const st = store(
      { 's3.object.tagging': 'true', 's3.object.tagging.key.value.pairs': 'team:data,env:test' },
      p.endpoint,
    );
    const w = new ParquetSinkWriter(
      sinkConfig({ kind: 'local', url: '' }, { flushSize: 10, topicsDir: 'tagged' }),
      st,
      new ManualClock(T0),
    );
    cleanups.push(() => w.stop());
    await w.open([{ topic: 'orders', partition: 0 }]);

    await w.put(orderRecords('orders', 0, 20, 10));
    await w.flushed();

    const [key] = await st.list('tagged/');
    const tags = await s3.client.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: key }));
    expect(Object.fromEntries((tags.TagSet ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      startOffset: '20',
      endOffset: '29',
      recordCount: '10',
      team: 'data',
      env: 'test',
    });
  });

  it('s3.object.behavior.on.tagging.error: ignore keeps the file, fail fails the upload', async () => {
    const p = await proxy((s) => /[?&]tagging/.test(s.url));
    const info = { startOffset: 0, endOffset: 0, recordCount: 1 };
    const ignoring = store({ 's3.object.tagging': 'true' }, p.endpoint);
    const failing = store(
      { 's3.object.tagging': 'true', 's3.object.behavior.on.tagging.error': 'FAIL' },
      p.endpoint,
    );

    await ignoring.put('e/kept', small, info);
    await expect(failing.put('e/failed', small, info)).rejects.toThrow(/cannot tag .*AccessDenied/);

    expect(await ignoring.get('e/kept')).toEqual(small);
  });

  it('s3.http.send.expect.continue sends Expect: 100-continue, or not', async () => {
    const p = await proxy();
    await store({}, p.endpoint).put('f/with', small);
    await store({ 's3.http.send.expect.continue': 'false' }, p.endpoint).put('f/without', small);

    const [withExpect, without] = p.seen.filter(isPut);
    expect(withExpect?.headers.expect).toBe('100-continue');
    expect(without?.headers.expect).toBeUndefined();
  });

  it('s3.proxy.url sends every request through the proxy, authenticated with s3.proxy.user/password', async () => {
    const p = await proxy();
    const st = store(
      { 's3.proxy.url': p.endpoint, 's3.proxy.user': 'sink', 's3.proxy.password': 'p@ss' },
      s3.endpoint,
    );

    await st.put('g/small', small);
    await st.get('g/small');

    expect(p.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      `PUT ${s3.endpoint}/${BUCKET}/g/small?x-id=PutObject`,
      `GET ${s3.endpoint}/${BUCKET}/g/small?x-id=GetObject`,
    ]);
    const basic = `Basic ${Buffer.from('sink:p@ss').toString('base64')}`;
    for (const s of p.seen) expect(s.headers['proxy-authorization']).toBe(basic);
    // Documented: no Expect through a proxy to an http:// endpoint (s3-store.ts).
    expect(p.seen[0]?.headers.expect).toBeUndefined();
  });

  it('s3.wan.mode sends requests to the Transfer Acceleration endpoint', async () => {
    const p = await proxy();
    const st = store({ 's3.wan.mode': 'true', 's3.proxy.url': p.endpoint, 'store.url': '' }, '');

    await expect(st.put('h/small', small)).rejects.toThrow();

    // Refused at the proxy: the tunnel request names the host the client wanted.
    expect(p.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      `CONNECT ${BUCKET}.s3-accelerate.amazonaws.com:443`,
    ]);
  });
});

describe('credentials on the wire', () => {
  const accessKeyOf = (s: Seen | undefined) =>
    /Credential=([^/]+)\//.exec(String(s?.headers.authorization))?.[1];

  it('static keys sign the requests', async () => {
    const p = await proxy();
    await store({}, p.endpoint).put('i/static', small);

    expect(accessKeyOf(p.seen.find(isPut))).toBe('S3RVER');
  });

  it("Java's EnvironmentVariableCredentialsProvider reads AWS_ACCESS_KEY_ID", async () => {
    const p = await proxy();
    const saved = { ...process.env };
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    cleanups.push(async () => {
      process.env = saved;
    });
    const st = store(
      {
        'aws.access.key.id': '',
        'aws.secret.access.key': '',
        's3.credentials.provider.class':
          'com.amazonaws.auth.EnvironmentVariableCredentialsProvider',
      },
      p.endpoint,
    );

    await st.put('i/env', small);

    expect(accessKeyOf(p.seen.find(isPut))).toBe('S3RVER');
  });

  it('AwsAssumeRoleCredentialsProvider assumes sts.role.arn and signs with the session it gets', async () => {
    const sts: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        sts.push(`${String(req.headers.authorization).match(/Credential=([^/]+)/)?.[1]} ${body}`);
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>S3RVER</AccessKeyId><SecretAccessKey>S3RVER</SecretAccessKey>
<SessionToken>session-1</SessionToken><Expiration>2999-01-01T00:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/r/s</Arn><AssumedRoleId>A:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult></AssumeRoleResponse>`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const saved = { ...process.env };
    // The SDK's service-specific endpoint variable: STS answers locally.
    process.env.AWS_ENDPOINT_URL_STS = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cleanups.push(async () => {
      process.env = saved;
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const p = await proxy();
    const st = store(
      {
        'aws.access.key.id': 'BASEKEY',
        'aws.secret.access.key': 'base-secret',
        's3.credentials.provider.class':
          'io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider',
        's3.credentials.provider.sts.role.arn': 'arn:aws:iam::1:role/sink',
        'sts.role.session.name': 'lake-sink',
        'sts.role.external.id': 'ext-9',
      },
      p.endpoint,
    );

    await st.put('i/assumed', small);

    expect(sts).toHaveLength(1);
    const [key, body] = (sts[0] as string).split(' ');
    expect(key).toBe('BASEKEY');
    const params = new URLSearchParams(body);
    expect([...params.entries()].filter(([k]) => k !== 'Version')).toEqual([
      ['Action', 'AssumeRole'],
      ['RoleArn', 'arn:aws:iam::1:role/sink'],
      ['RoleSessionName', 'lake-sink'],
      ['ExternalId', 'ext-9'],
    ]);
    const put = p.seen.find(isPut);
    expect(accessKeyOf(put)).toBe('S3RVER');
    expect(put?.headers['x-amz-security-token']).toBe('session-1');
  });
});

describe('retry.backoff.ms', () => {
  it('after a transient S3 failure the task asks the runner to wait retry.backoff.ms', async () => {
    const p = await proxy((s) => (isPut(s) ? 500 : false));
    const timeouts: number[] = [];
    const tp = { topic: 'orders', partition: 0 };
    const context = taskContext([tp], { timeout: (ms) => timeouts.push(ms) });
    const task = new ParquetSinkTask();
    cleanups.push(() => task.stop());
    await task.start(
      {
        's3.bucket.name': BUCKET,
        's3.region': s3.region,
        'store.url': p.endpoint,
        'aws.access.key.id': 'S3RVER',
        'aws.secret.access.key': 'S3RVER',
        's3.part.retries': '0',
        'flush.size': '1',
        'retry.backoff.ms': '1234',
      },
      context,
    );
    await task.open([tp]);
    await task.put(orderRecords('orders', 0, 0, 1)); // the upload fails in the background

    // The next put after the background failure retries the upload and throws.
    const error = await waitFor('a put to fail', () =>
      task.put([]).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );

    expect(error).toBeInstanceOf(RetriableException);
    expect(timeouts).toEqual([1234]);
  });
});
