/**
 * The BullMQ sink's configuration: every key of issue #22, each checked on its own by
 * its definition and across keys by `validateSinkConfig` (the connector's validate
 * hook), which also refuses keys of our namespaces that nothing defines (a typo, or a
 * key of another BullMQ connector) and, last, PINGs Redis as configured: an
 * unreachable Redis or a refused password fails /config/validate, not a task later.
 */
import {
  type AnyConfigDef,
  atLeast,
  between,
  type ConfigError,
  define,
  nonEmpty,
  oneOf,
} from '../../src/connect/api/index.ts';
import {
  type JobDataSpec,
  type JobIdSpec,
  type KeepJobs,
  MAX_PRIORITY,
  type NumberSpec,
  parseJobData,
  parseJobId,
  parseKeepJobs,
  parseNumberOrField,
  SettingError,
  templateOf,
} from './job-settings.ts';
import { checkRedisUrl, probeRedisConfig, redisConfigDefs } from './redis-config.ts';
import { type RedisSettings, redisSettings } from './redis-settings.ts';
import type { Template } from './template.ts';

const GROUP_QUEUE = 'Queue';
const GROUP_JOB = 'Job';

/** A week of delay at most: a longer delay is more likely a unit mistake (s for ms). */
const MAX_DELAY_MS = 7 * 24 * 3600 * 1000;

export const NULL_BEHAVIORS = ['ignore', 'fail', 'delete'] as const;
export type NullBehavior = (typeof NULL_BEHAVIORS)[number];

export const ORDERINGS = ['none', 'key'] as const;
export type Ordering = (typeof ORDERINGS)[number];

/** Run a parser as a definition's validator: its SettingError text is the field's message. */
function checked(parse: (text: string) => unknown) {
  return (v: string) => {
    try {
      parse(v);
      return undefined;
    } catch (e) {
      if (e instanceof SettingError) return e.message;
      throw e;
    }
  };
}

function queueNameTemplate(text: string): Template {
  const t = templateOf(text);
  for (const part of t.parts) {
    if (typeof part === 'string' && part.includes(':')) {
      throw new SettingError("BullMQ queue names cannot contain ':'");
    }
  }
  if (t.text.trim() === '') throw new SettingError('must not be empty');
  return t;
}

export const bullmqSinkConfigDefs: readonly AnyConfigDef[] = [
  ...redisConfigDefs,
  define({
    name: 'queue.name',
    type: 'string',
    default: undefined,
    validator: checked(queueNameTemplate),
    doc: 'Queue to add jobs to: fixed, or a template such as ${topic} or cdc-${table}',
    importance: 'high',
    group: GROUP_QUEUE,
  }),
  define({
    name: 'queue.prefix',
    type: 'string',
    default: 'bull',
    validator: nonEmpty,
    doc: "BullMQ key prefix of the queues (BullMQ's prefix option); the sink's positions live under it too",
    group: GROUP_QUEUE,
  }),
  define({
    name: 'job.name',
    type: 'string',
    default: '${topic}',
    validator: checked(templateOf),
    doc: 'Job name: fixed, or a template such as ${value.op}',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.data',
    type: 'string',
    default: 'value',
    validator: checked(parseJobData),
    doc: 'value (the record value), after (the after image of a Debezium envelope, before for deletes), or a list of value fields',
    importance: 'high',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.id',
    type: 'string',
    default: 'record',
    validator: checked(parseJobId),
    doc: 'record (<topic>-<partition>-<offset>), key (a newer change of the key replaces its waiting job), or a template such as ${value.after.id}',
    importance: 'high',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.attempts',
    type: 'int',
    default: 1,
    validator: atLeast(1),
    doc: "BullMQ's attempts: tries of a job before it fails",
    group: GROUP_JOB,
  }),
  define({
    name: 'job.backoff.type',
    type: 'string',
    default: '',
    validator: oneOf('', 'fixed', 'exponential'),
    doc: 'Back-off between attempts: fixed or exponential (empty: none)',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.backoff.delay',
    type: 'long',
    default: 0,
    validator: atLeast(0),
    doc: 'Back-off delay in ms (the first one, for exponential)',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.priority',
    type: 'string',
    default: '',
    validator: checked((t) => parseNumberOrField(t, 0, MAX_PRIORITY)),
    doc: `Job priority 0..${MAX_PRIORITY} (1 is the highest, 0 none), fixed or a field such as \${value.after.priority}`,
    group: GROUP_JOB,
  }),
  define({
    name: 'job.delay.ms',
    type: 'string',
    default: '',
    validator: checked((t) => parseNumberOrField(t, 0, MAX_DELAY_MS)),
    doc: 'Delay before a job may run, fixed or a field such as ${value.after.delay}',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.lifo',
    type: 'boolean',
    default: false,
    doc: 'Add jobs at the head of the queue (last in, first out)',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.remove.on.complete',
    type: 'string',
    default: 'false',
    validator: checked(parseKeepJobs),
    doc: 'Remove completed jobs: true, false, a count to keep, or an age (3600s, 30m, 24h, 7d)',
    group: GROUP_JOB,
  }),
  define({
    name: 'job.remove.on.fail',
    type: 'string',
    default: 'false',
    validator: checked(parseKeepJobs),
    doc: 'Remove failed jobs: true, false, a count to keep, or an age (3600s, 30m, 24h, 7d)',
    group: GROUP_JOB,
  }),
  define({
    name: 'ordering',
    type: 'string',
    default: 'none',
    validator: oneOf(...ORDERINGS),
    doc: 'none, or key: jobs of one record key run in record order, needs job.id=record and consumers that are KeyOrderedWorkers (plain Workers ignore the order). Costs: 2 more Redis writes per job in the sink transaction, 2 more round trips per job in the consumer, a later job of a busy key parked and re-tried (100 ms doubling to 5 s, promoted at once when its key is released); single Redis only, not Redis Cluster',
    group: GROUP_JOB,
  }),
  define({
    name: 'behavior.on.null.values',
    type: 'string',
    default: 'ignore',
    validator: oneOf(...NULL_BEHAVIORS),
    doc: 'A record with a null value (a tombstone): ignore it, fail the task, or delete the waiting job of its key (needs job.id=key)',
    group: GROUP_JOB,
  }),
  define({
    name: 'batch.size',
    type: 'int',
    default: 1000,
    validator: between(1, 100_000),
    doc: 'Most jobs added in one Redis transaction (one round trip); larger batches are split',
    group: GROUP_JOB,
  }),
];

/** Whether a queue.name template reads the value (which a tombstone lacks). */
function usesValue(queueName: string): boolean {
  try {
    return queueNameTemplate(queueName).parts.some(
      (p) =>
        typeof p !== 'string' && (p.kind === 'source' || (p.kind === 'field' && p.of === 'value')),
    );
  } catch {
    return false;
  }
}

/** Namespaces this connector owns: a key in them that no definition knows is refused. */
const OWN_PREFIXES = ['redis.', 'queue.', 'job.', 'batch.', 'ordering.'];
const OWN_KEYS = new Set(bullmqSinkConfigDefs.map((d) => d.name));

export interface BullMQSinkConfig {
  redis: RedisSettings;
  queueName: Template;
  prefix: string;
  jobName: Template;
  jobData: JobDataSpec;
  jobId: JobIdSpec;
  attempts: number;
  backoff: { type: 'fixed' | 'exponential'; delay: number } | undefined;
  priority: NumberSpec;
  delayMs: NumberSpec;
  lifo: boolean;
  removeOnComplete: KeepJobs;
  removeOnFail: KeepJobs;
  nullBehavior: NullBehavior;
  ordering: Ordering;
  batchSize: number;
}

/** Typed settings from values parsed against bullmqSinkConfigDefs (and validated). */
export function toSinkConfig(v: Readonly<Record<string, unknown>>): BullMQSinkConfig {
  const backoffType = v['job.backoff.type'] as string;
  return {
    redis: redisSettings(v),
    queueName: queueNameTemplate(v['queue.name'] as string),
    prefix: v['queue.prefix'] as string,
    jobName: templateOf(v['job.name'] as string),
    jobData: parseJobData(v['job.data'] as string),
    jobId: parseJobId(v['job.id'] as string),
    attempts: v['job.attempts'] as number,
    backoff:
      backoffType === ''
        ? undefined
        : { type: backoffType as 'fixed' | 'exponential', delay: v['job.backoff.delay'] as number },
    priority: parseNumberOrField(v['job.priority'] as string, 0, MAX_PRIORITY),
    delayMs: parseNumberOrField(v['job.delay.ms'] as string, 0, MAX_DELAY_MS),
    lifo: v['job.lifo'] as boolean,
    removeOnComplete: parseKeepJobs(v['job.remove.on.complete'] as string),
    removeOnFail: parseKeepJobs(v['job.remove.on.fail'] as string),
    nullBehavior: v['behavior.on.null.values'] as NullBehavior,
    ordering: v.ordering as Ordering,
    batchSize: v['batch.size'] as number,
  };
}

/**
 * Cross-field checks, then the Redis probe (only when the rest is valid, so a config
 * with a typo answers at once). `probe: false` skips the probe (the task connects
 * itself, with retries).
 */
export function validateSinkConfig(
  v: Readonly<Record<string, unknown>>,
  options: { probe: boolean } = { probe: true },
): ConfigError[] {
  const errors: ConfigError[] = [];
  const add = (key: string, message: string) => errors.push({ key, value: v[key], message });
  for (const key of Object.keys(v)) {
    if (OWN_KEYS.has(key) || !OWN_PREFIXES.some((p) => key.startsWith(p))) continue;
    add(key, `is not a key of the BullMQ sink; its keys are ${[...OWN_KEYS].join(', ')}`);
  }
  const redis = checkRedisUrl(v, errors);
  const jobId = (v['job.id'] as string).trim();
  if (v.ordering === 'key' && jobId !== 'record') {
    // A redelivered record must map to the job already in its key's set, and a job of
    // another record must never take its place: only record ids give both.
    add(
      'ordering',
      `ordering=key needs job.id=record (one job per record, so a key's jobs keep their record order), not job.id=${jobId}`,
    );
  }
  if (v['behavior.on.null.values'] === 'delete' && usesValue(v['queue.name'] as string)) {
    add(
      'queue.name',
      'with behavior.on.null.values=delete a tombstone must find its queue, but it has no value: use only ${topic}, ${partition} and ${key...} placeholders',
    );
  }
  if (v['behavior.on.null.values'] === 'delete' && jobId !== 'key') {
    add(
      'behavior.on.null.values',
      'delete removes the waiting job of the record key, so it needs job.id=key',
    );
  }
  const backoffType = v['job.backoff.type'] as string;
  if (backoffType !== '' && (v['job.attempts'] as number) <= 1) {
    add('job.backoff.type', 'a back-off applies between attempts: set job.attempts above 1');
  }
  if (backoffType === '' && (v['job.backoff.delay'] as number) > 0) {
    add('job.backoff.delay', 'has no effect without job.backoff.type (fixed or exponential)');
  }
  if (backoffType !== '' && (v['job.backoff.delay'] as number) === 0) {
    add('job.backoff.delay', `job.backoff.type=${backoffType} needs a delay above 0 ms`);
  }
  if (errors.length === 0 && redis !== undefined && options.probe)
    probeRedisConfig(v, redis, errors);
  return errors;
}
