/**
 * The S3 keys of the Parquet sink, as Confluent's S3 sink names them
 * (S3SinkConnectorConfig), with Confluent's semantics:
 *
 *   s3.ssea.name=AES256                  SSE-S3; with s3.sse.customer.key: SSE-C
 *   s3.ssea.name=aws:kms (aws:kms:dsse)  SSE-KMS with s3.sse.kms.key.id, or the bucket's
 *                                        default KMS key when no id is given (where
 *                                        Confluent would then silently write unencrypted)
 *   s3.sse.customer.key                  base64 of a 256-bit key; sent with its MD5 on every
 *                                        upload, part upload and read (recovery reads footers)
 *   s3.acl.canned                        x-amz-acl on every upload
 *   s3.object.tagging                    after each upload, tags startOffset, endOffset,
 *                                        recordCount (+ s3.object.tagging.key.value.pairs);
 *                                        a failed tagging is logged or fails the task per
 *                                        s3.object.behavior.on.tagging.error
 *   s3.proxy.url/user/password           every request through that HTTP proxy
 *   s3.wan.mode                          S3 Transfer Acceleration endpoints (AWS only)
 *   s3.http.send.expect.continue         `Expect: 100-continue` on requests with a body
 *   s3.credentials.provider.class        s3-credentials.ts
 * Keys that only tune Confluent's Java buffers (s3.elastic.buffer.*) are accepted and
 * have nothing to tune here: buffers grow as needed, bounded by buffer.memory.max.bytes.
 * Enumerations are compared in any case. Combinations Confluent would ignore (a KMS key
 * id without aws:kms, a customer key without AES256, any of these with a local folder)
 * are refused by name instead.
 */
import type { ObjectCannedACL, ServerSideEncryption } from '@aws-sdk/client-s3';
import {
  type AnyConfigDef,
  atLeast,
  type ConfigError,
  define,
} from '../../src/connect/api/index.ts';
import { canonical, enumOf } from './enum-values.ts';
import {
  type CredentialsSpec,
  credentialsSpec,
  PROVIDER_CLASSES,
  providerKind,
  REFUSED_PROVIDER_CLASSES,
} from './s3-credentials.ts';

const MiB = 1024 * 1024;
/** S3 refuses multipart parts under 5 MiB (except the last). */
const S3_MIN_PART_SIZE = 5 * MiB;
const GROUP = 'Storage';

const SSE_ALGORITHMS = ['AES256', 'aws:kms', 'aws:kms:dsse'] as const;
const CANNED_ACLS = [
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'aws-exec-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
] as const;
const TAGGING_ERROR_BEHAVIORS = ['ignore', 'fail'] as const;
const CREDENTIALS_PREFIX = 's3.credentials.provider.';
const DEFAULT_PROVIDER = 'software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider';

/** The assume-role keys, Confluent's prefixed name first, then the bare alias. */
const STS_KEYS = {
  roleArn: [`${CREDENTIALS_PREFIX}sts.role.arn`, 'sts.role.arn'],
  sessionName: [`${CREDENTIALS_PREFIX}sts.role.session.name`, 'sts.role.session.name'],
  externalId: [`${CREDENTIALS_PREFIX}sts.role.external.id`, 'sts.role.external.id'],
  stsRegion: [`${CREDENTIALS_PREFIX}sts.region`, 'sts.region'],
} as const;
const STS_DOCS: Record<keyof typeof STS_KEYS, string> = {
  roleArn: 'Role to assume with AwsAssumeRoleCredentialsProvider',
  sessionName: 'Session name of the assumed role',
  externalId: 'External id the role requires, if any',
  stsRegion: 'Region of the STS endpoint (default: s3.region)',
};

export const s3ConfigDefs: readonly AnyConfigDef[] = [
  define({
    name: 's3.bucket.name',
    type: 'string',
    default: '',
    doc: 'S3 bucket to write to',
    importance: 'high',
    group: GROUP,
  }),
  define({
    name: 's3.region',
    type: 'string',
    default: 'us-west-2',
    doc: 'AWS region of the bucket',
    importance: 'medium',
    group: GROUP,
  }),
  define({
    name: 's3.path.style.access.enabled',
    type: 'boolean',
    default: true,
    doc: 'Address the bucket in the path (needed by MinIO and s3rver) rather than the host name',
    group: GROUP,
  }),
  define({
    name: 's3.part.size',
    type: 'int',
    default: 25 * MiB,
    validator: atLeast(S3_MIN_PART_SIZE),
    doc: 'Files up to this size go in one PUT; larger ones in multipart uploads of parts this size',
    group: GROUP,
  }),
  define({
    name: 's3.part.retries',
    type: 'int',
    default: 3,
    validator: atLeast(0),
    doc: 'Retries of a failed S3 request (network errors, throttling, 5xx)',
    group: GROUP,
  }),
  define({
    name: 's3.retry.backoff.ms',
    type: 'long',
    default: 200,
    validator: atLeast(0),
    doc: 'First back-off between S3 retries; doubles each retry',
    group: GROUP,
  }),
  define({
    name: 'aws.access.key.id',
    type: 'string',
    default: '',
    doc: 'Access key; empty uses s3.credentials.provider.class (the AWS default chain)',
    group: GROUP,
  }),
  define({
    name: 'aws.secret.access.key',
    type: 'password',
    default: '',
    doc: 'Secret key matching aws.access.key.id',
    group: GROUP,
  }),
  define({
    name: 's3.credentials.provider.class',
    type: 'class',
    default: DEFAULT_PROVIDER,
    doc: "Where credentials come from without static keys: the AWS SDK's (v1 or v2) or Confluent's provider class names: DefaultCredentialsProvider, EnvironmentVariableCredentialsProvider, ProfileCredentialsProvider, WebIdentityTokenFileCredentialsProvider, InstanceProfileCredentialsProvider, ContainerCredentialsProvider, io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
    group: GROUP,
  }),
  ...(Object.keys(STS_KEYS) as Array<keyof typeof STS_KEYS>).flatMap((k) =>
    STS_KEYS[k].map((name) =>
      define({ name, type: 'string', default: '', doc: STS_DOCS[k], group: GROUP }),
    ),
  ),
  define({
    name: 's3.ssea.name',
    type: 'string',
    default: '',
    validator: (v: string, key: string) =>
      v === '' ? undefined : enumOf(...SSE_ALGORITHMS)(v, key),
    doc: 'Server-side encryption: AES256 (SSE-S3, or SSE-C with s3.sse.customer.key), aws:kms or aws:kms:dsse (SSE-KMS); empty: none',
    group: GROUP,
  }),
  define({
    name: 's3.sse.kms.key.id',
    type: 'string',
    default: '',
    doc: "KMS key for s3.ssea.name=aws:kms; empty: the bucket's default key",
    group: GROUP,
  }),
  define({
    name: 's3.sse.customer.key',
    type: 'password',
    default: '',
    doc: 'SSE-C key (base64 of 32 bytes) for s3.ssea.name=AES256; uploads and reads carry it',
    group: GROUP,
  }),
  define({
    name: 's3.acl.canned',
    type: 'string',
    default: '',
    validator: (v: string, key: string) => (v === '' ? undefined : enumOf(...CANNED_ACLS)(v, key)),
    doc: 'Canned ACL of every object written (e.g. bucket-owner-full-control); empty: none',
    group: GROUP,
  }),
  define({
    name: 's3.object.tagging',
    type: 'boolean',
    default: false,
    doc: 'Tag each object with startOffset, endOffset and recordCount after its upload',
    group: GROUP,
  }),
  define({
    name: 's3.object.tagging.key.value.pairs',
    type: 'list',
    default: [],
    doc: 'More tags with s3.object.tagging, as key:value pairs',
    group: GROUP,
  }),
  define({
    name: 's3.object.behavior.on.tagging.error',
    type: 'string',
    default: 'ignore',
    validator: enumOf(...TAGGING_ERROR_BEHAVIORS),
    doc: 'A failed tagging is logged (ignore) or fails the task (fail)',
    group: GROUP,
  }),
  define({
    name: 's3.proxy.url',
    type: 'string',
    default: '',
    doc: 'HTTP proxy for every S3 request, e.g. http://proxy:3128',
    group: GROUP,
  }),
  define({
    name: 's3.proxy.user',
    type: 'string',
    default: '',
    doc: 'Proxy user (over one in s3.proxy.url)',
    group: GROUP,
  }),
  define({
    name: 's3.proxy.password',
    type: 'password',
    default: '',
    doc: 'Proxy password (over one in s3.proxy.url)',
    group: GROUP,
  }),
  define({
    name: 's3.wan.mode',
    type: 'boolean',
    default: false,
    doc: 'Use the S3 Transfer Acceleration endpoint (AWS only; the bucket must have it enabled)',
    group: GROUP,
  }),
  define({
    name: 's3.http.send.expect.continue',
    type: 'boolean',
    default: true,
    doc: 'Send Expect: 100-continue before request bodies, so a refused upload sends no data',
    group: GROUP,
  }),
  define({
    name: 's3.elastic.buffer.enable',
    type: 'boolean',
    default: false,
    doc: 'Accepted for Confluent configs: buffers here always grow as needed (bounded by buffer.memory.max.bytes), so there is nothing to enable',
    group: GROUP,
  }),
  define({
    name: 's3.elastic.buffer.init.capacity',
    type: 'int',
    default: 128 * 1024,
    validator: atLeast(4096),
    doc: "Accepted for Confluent configs: sizes Confluent's Java buffer, which this sink does not have",
    group: GROUP,
  }),
];

export type SseSettings =
  | { kind: 'none' }
  | { kind: 's3' }
  | { kind: 'kms'; algorithm: ServerSideEncryption; keyId?: string }
  | { kind: 'customer'; key: string };

/** What S3Store needs beyond the bucket coordinates. */
export interface S3Features {
  sse: SseSettings;
  cannedAcl?: ObjectCannedACL;
  tagging?: { extra: Record<string, string>; onError: 'ignore' | 'fail' };
  proxy?: { url: string; user?: string; password?: string };
  accelerate: boolean;
  expectContinue: boolean;
  credentials: CredentialsSpec;
}

const str = (v: Readonly<Record<string, unknown>>, key: string) =>
  (v[key] as string | undefined) ?? '';

/** The first of Confluent's key and its bare alias that is set. */
function sts(v: Readonly<Record<string, unknown>>, k: keyof typeof STS_KEYS): string {
  const [prefixed, bare] = STS_KEYS[k];
  return str(v, prefixed) || str(v, bare);
}

export function toS3Features(v: Readonly<Record<string, unknown>>): S3Features {
  const ssea = str(v, 's3.ssea.name');
  const algorithm = ssea === '' ? '' : canonical(SSE_ALGORITHMS, ssea);
  const customerKey = str(v, 's3.sse.customer.key');
  const kmsKeyId = str(v, 's3.sse.kms.key.id');
  const sse: SseSettings =
    algorithm === ''
      ? { kind: 'none' }
      : algorithm === 'AES256'
        ? customerKey
          ? { kind: 'customer', key: customerKey }
          : { kind: 's3' }
        : { kind: 'kms', algorithm, ...(kmsKeyId ? { keyId: kmsKeyId } : {}) };
  const acl = str(v, 's3.acl.canned');
  const proxyUrl = str(v, 's3.proxy.url');
  const proxyUser = str(v, 's3.proxy.user');
  const proxyPassword = str(v, 's3.proxy.password');
  return {
    sse,
    ...(acl ? { cannedAcl: canonical(CANNED_ACLS, acl) } : {}),
    ...(v['s3.object.tagging']
      ? {
          tagging: {
            extra: Object.fromEntries(
              (v['s3.object.tagging.key.value.pairs'] as string[]).map(splitTag),
            ),
            onError: canonical(
              TAGGING_ERROR_BEHAVIORS,
              str(v, 's3.object.behavior.on.tagging.error'),
            ),
          },
        }
      : {}),
    ...(proxyUrl
      ? {
          proxy: {
            url: proxyUrl,
            ...(proxyUser ? { user: proxyUser } : {}),
            ...(proxyPassword ? { password: proxyPassword } : {}),
          },
        }
      : {}),
    accelerate: v['s3.wan.mode'] === true,
    expectContinue: v['s3.http.send.expect.continue'] !== false,
    credentials: credentialsSpec({
      className: str(v, 's3.credentials.provider.class') || DEFAULT_PROVIDER,
      accessKeyId: str(v, 'aws.access.key.id'),
      secretAccessKey: str(v, 'aws.secret.access.key'),
      roleArn: sts(v, 'roleArn'),
      sessionName: sts(v, 'sessionName'),
      externalId: sts(v, 'externalId'),
      stsRegion: sts(v, 'stsRegion'),
    }),
  };
}

function splitTag(pair: string): [string, string] {
  const at = pair.indexOf(':');
  return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
}

/** Keys that make sense only for an S3 store, refused with store.url=file://. */
const S3_ONLY: ReadonlyArray<[string, (v: unknown) => boolean]> = [
  ['s3.ssea.name', (x) => x !== ''],
  ['s3.sse.kms.key.id', (x) => x !== ''],
  ['s3.sse.customer.key', (x) => x !== ''],
  ['s3.acl.canned', (x) => x !== ''],
  ['s3.object.tagging', (x) => x === true],
  ['s3.proxy.url', (x) => x !== ''],
  ['s3.wan.mode', (x) => x === true],
];

/** Cross-field checks of the S3 keys, one error per offending key. */
export function validateS3Config(
  v: Readonly<Record<string, unknown>>,
  local: boolean,
): ConfigError[] {
  const errors: ConfigError[] = [];
  const add = (key: string, message: string) => errors.push({ key, value: v[key], message });
  if (local) {
    for (const [key, isSet] of S3_ONLY) {
      if (isSet(v[key]))
        add(key, 'applies to an S3 bucket only, and store.url names a local folder');
    }
    return errors;
  }
  const ssea = str(v, 's3.ssea.name').toLowerCase();
  const customerKey = str(v, 's3.sse.customer.key');
  if (customerKey !== '') {
    if (ssea !== 'aes256') add('s3.sse.customer.key', 'SSE-C needs s3.ssea.name=AES256');
    else if (
      Buffer.from(customerKey, 'base64').length !== 32 ||
      !/^[A-Za-z0-9+/]+=*$/.test(customerKey)
    ) {
      add('s3.sse.customer.key', 'must be the base64 encoding of a 256-bit (32-byte) key');
    }
  }
  if (str(v, 's3.sse.kms.key.id') !== '' && !ssea.startsWith('aws:kms')) {
    add('s3.sse.kms.key.id', 'a KMS key needs s3.ssea.name=aws:kms (or aws:kms:dsse)');
  }
  for (const pair of (v['s3.object.tagging.key.value.pairs'] as string[] | undefined) ?? []) {
    if (!/^[^:]+:.*$/.test(pair)) {
      add('s3.object.tagging.key.value.pairs', `'${pair}' is not key:value`);
    }
  }
  if (
    (v['s3.object.tagging.key.value.pairs'] as string[] | undefined)?.length &&
    v['s3.object.tagging'] !== true
  ) {
    add('s3.object.tagging.key.value.pairs', 'tags are written only with s3.object.tagging=true');
  }
  const proxyUrl = str(v, 's3.proxy.url');
  if (proxyUrl !== '' && !/^https?:\/\/[^/]+/.test(proxyUrl)) {
    add('s3.proxy.url', 'expected an http:// or https:// proxy URL, e.g. http://proxy:3128');
  }
  for (const key of ['s3.proxy.user', 's3.proxy.password']) {
    if (str(v, key) !== '' && proxyUrl === '') add(key, 'is used only with s3.proxy.url');
  }
  if (v['s3.wan.mode'] === true && str(v, 'store.url') !== '') {
    add(
      's3.wan.mode',
      'Transfer Acceleration is an AWS endpoint; it cannot be combined with store.url',
    );
  }
  errors.push(...credentialErrors(v));
  return errors;
}

function credentialErrors(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  const key = 's3.credentials.provider.class';
  const className = str(v, key);
  const kind = providerKind(className);
  if (kind === undefined) {
    const instead =
      REFUSED_PROVIDER_CLASSES[className] ??
      `use one of ${Object.keys(PROVIDER_CLASSES)
        .filter((n) => n.includes('.'))
        .join(', ')}`;
    errors.push({
      key,
      value: className,
      message: `not supported: ${key}=${className}; ${instead}`,
    });
    return errors;
  }
  const stsSet = (Object.keys(STS_KEYS) as Array<keyof typeof STS_KEYS>).flatMap((k) =>
    STS_KEYS[k].filter((name) => str(v, name) !== ''),
  );
  if (kind !== 'assume-role') {
    for (const name of stsSet) {
      errors.push({
        key: name,
        value: v[name],
        message: `is used only with ${key}=io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider`,
      });
    }
    return errors;
  }
  for (const k of ['roleArn', 'sessionName'] as const) {
    if (sts(v, k) === '') {
      const [name] = STS_KEYS[k];
      errors.push({ key: name, value: '', message: 'AwsAssumeRoleCredentialsProvider needs it' });
    }
  }
  for (const k of Object.keys(STS_KEYS) as Array<keyof typeof STS_KEYS>) {
    const [prefixed, bare] = STS_KEYS[k];
    if (str(v, prefixed) !== '' && str(v, bare) !== '' && str(v, prefixed) !== str(v, bare)) {
      errors.push({
        key: bare,
        value: v[bare],
        message: `differs from ${prefixed}; set one of them`,
      });
    }
  }
  return errors;
}

/** Keys under s3.credentials.provider. that a provider could read and none here does. */
export function isUnknownCredentialsKey(key: string): boolean {
  return key.startsWith(CREDENTIALS_PREFIX) && !s3ConfigDefs.some((d) => d.name === key);
}
