/**
 * The BullMQ source's configuration: which queue's events stream to read
 * (`<queue.prefix>:<queue.name>:events`, where BullMQ's scripts append every job's
 * state changes), which events to keep, and the topic they go to. Shares the Redis
 * keys with the sink (redis-config.ts); keys of our namespaces that nothing defines are
 * refused by name, and Redis is PINGed at validation.
 */
import {
  type AnyConfigDef,
  between,
  type ConfigError,
  define,
  eachOneOf,
  nonEmpty,
} from '../../src/connect/api/index.ts';
import { checkRedisUrl, probeRedisConfig, redisConfigDefs } from './redis-config.ts';
import { type RedisSettings, redisSettings } from './redis-settings.ts';

/** The job events the source can stream: a job's final outcomes. */
export const JOB_EVENTS = ['completed', 'failed'] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];

const GROUP_SOURCE = 'Source';

export const bullmqSourceConfigDefs: readonly AnyConfigDef[] = [
  ...redisConfigDefs,
  define<string>({
    name: 'queue.name',
    type: 'string',
    default: undefined,
    validator: (v) =>
      v === ''
        ? 'must not be empty'
        : v.includes(':')
          ? "BullMQ queue names cannot contain ':'"
          : undefined,
    doc: 'The queue whose job events are streamed',
    importance: 'high',
    group: GROUP_SOURCE,
  }),
  define({
    name: 'queue.prefix',
    type: 'string',
    default: 'bull',
    validator: nonEmpty,
    doc: "BullMQ key prefix of the queue (BullMQ's prefix option)",
    group: GROUP_SOURCE,
  }),
  define<string>({
    name: 'topic',
    type: 'string',
    default: undefined,
    validator: (v) =>
      /^[a-zA-Z0-9._-]{1,249}$/.test(v)
        ? undefined
        : 'expected a Kafka topic name ([a-zA-Z0-9._-], at most 249)',
    doc: 'Topic the events go to, keyed by job id',
    importance: 'high',
    group: GROUP_SOURCE,
  }),
  define<string[]>({
    name: 'events',
    type: 'list',
    default: [...JOB_EVENTS],
    validator: (v) =>
      v.length === 0 ? 'name at least one event' : eachOneOf(...JOB_EVENTS)(v, 'events'),
    doc: 'Job events to stream: completed, failed',
    group: GROUP_SOURCE,
  }),
  define({
    name: 'batch.size',
    type: 'int',
    default: 1000,
    validator: between(1, 100_000),
    doc: 'Most stream entries read per poll',
    group: GROUP_SOURCE,
  }),
];

const OWN_PREFIXES = ['redis.', 'queue.', 'job.', 'batch.', 'events.'];
const OWN_KEYS = new Set(bullmqSourceConfigDefs.map((d) => d.name));

export interface BullMQSourceConfig {
  redis: RedisSettings;
  queue: string;
  prefix: string;
  topic: string;
  events: ReadonlySet<string>;
  batchSize: number;
}

export function toSourceConfig(v: Readonly<Record<string, unknown>>): BullMQSourceConfig {
  return {
    redis: redisSettings(v),
    queue: v['queue.name'] as string,
    prefix: v['queue.prefix'] as string,
    topic: v.topic as string,
    events: new Set(v.events as string[]),
    batchSize: v['batch.size'] as number,
  };
}

export function validateSourceConfig(
  v: Readonly<Record<string, unknown>>,
  options: { probe: boolean } = { probe: true },
): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const key of Object.keys(v)) {
    if (OWN_KEYS.has(key) || !OWN_PREFIXES.some((p) => key.startsWith(p))) continue;
    errors.push({
      key,
      value: v[key],
      message: `is not a key of the BullMQ source; its keys are ${[...OWN_KEYS].join(', ')}`,
    });
  }
  const redis = checkRedisUrl(v, errors);
  if (errors.length === 0 && redis !== undefined && options.probe)
    probeRedisConfig(v, redis, errors);
  return errors;
}
