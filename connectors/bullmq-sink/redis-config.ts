/**
 * The Redis keys both BullMQ connectors share (redis-settings.ts says how they
 * combine), the check of redis.url, and the validation-time PING (redis-probe.ts).
 */
import {
  type AnyConfigDef,
  atLeast,
  between,
  type ConfigError,
  define,
} from '../../src/connect/api/index.ts';
import { probeRedis } from './redis-probe.ts';
import {
  describeRedis,
  type RedisSettings,
  RedisUrlError,
  redisSettings,
} from './redis-settings.ts';

const GROUP_REDIS = 'Redis';

export const redisConfigDefs: readonly AnyConfigDef[] = [
  define({
    name: 'redis.url',
    type: 'string',
    default: '',
    doc: 'redis://[user:password@]host:port/db or rediss:// for TLS; the redis.* keys override its parts',
    importance: 'high',
    group: GROUP_REDIS,
  }),
  define({
    name: 'redis.host',
    type: 'string',
    default: '',
    doc: 'Redis host (empty: from redis.url, else 127.0.0.1)',
    group: GROUP_REDIS,
  }),
  define<number>({
    name: 'redis.port',
    type: 'int',
    default: null,
    validator: between(1, 65535),
    doc: 'Redis port (unset: from redis.url, else 6379)',
    group: GROUP_REDIS,
  }),
  define({
    name: 'redis.username',
    type: 'string',
    default: '',
    doc: 'Redis ACL user (empty: from redis.url, else the default user)',
    group: GROUP_REDIS,
  }),
  define({
    name: 'redis.password',
    type: 'password',
    default: '',
    doc: 'Redis password (empty: from redis.url, else none)',
    group: GROUP_REDIS,
  }),
  define<number>({
    name: 'redis.db',
    type: 'int',
    default: null,
    validator: atLeast(0),
    doc: 'Redis database number (unset: from redis.url, else 0)',
    group: GROUP_REDIS,
  }),
  define<boolean>({
    name: 'redis.tls',
    type: 'boolean',
    default: null,
    doc: 'Connect with TLS (unset: true for rediss:// URLs)',
    group: GROUP_REDIS,
  }),
];

/** The Redis settings, or undefined with an error on redis.url when the URL is bad. */
export function checkRedisUrl(
  v: Readonly<Record<string, unknown>>,
  errors: ConfigError[],
): RedisSettings | undefined {
  try {
    return redisSettings(v);
  } catch (e) {
    if (!(e instanceof RedisUrlError)) throw e;
    errors.push({ key: 'redis.url', value: v['redis.url'], message: e.message });
    return undefined;
  }
}

/** PING Redis as configured; a failure is an error on redis.url (or redis.host when only it is set). */
export function probeRedisConfig(
  v: Readonly<Record<string, unknown>>,
  redis: RedisSettings,
  errors: ConfigError[],
): void {
  const problem = probeRedis(redis);
  if (problem === undefined) return;
  const key =
    (v['redis.url'] as string) !== '' || !(v['redis.host'] as string) ? 'redis.url' : 'redis.host';
  errors.push({
    key,
    value: v[key],
    message: `Redis at ${describeRedis(redis)} is not usable: ${problem}`,
  });
}
