import { describe, expect, it } from 'vitest';
import { loadManifests, parseConfig, pluginNames } from '../../../src/connect/api/index.ts';
import { freePort } from '../../../test/helpers/ports.ts';
import { redisUrl } from '../../../test/helpers/redis.ts';
import { bullmqSinkConfigDefs, toSinkConfig, validateSinkConfig } from '../config.ts';
import * as entry from '../index.ts';

/** Per-key messages of a config, as /config/validate reports them. */
function problems(raw: Record<string, string>): Record<string, string> {
  const parsed = parseConfig(bullmqSinkConfigDefs, raw);
  const errors = parsed.errors.length > 0 ? parsed.errors : validateSinkConfig(parsed.values);
  return Object.fromEntries(errors.map((e) => [e.key, e.message]));
}

const ok = { 'redis.url': redisUrl, 'queue.name': 'orders' };

describe('BullMQ sink config', () => {
  it('accepts a valid config against a reachable Redis', () => {
    expect(problems(ok)).toEqual({});
  });

  it('refuses each bad value with a message naming what is expected', () => {
    expect(
      problems({
        ...ok,
        'queue.name': 'cdc-${tabel}',
        'job.name': '${value.op',
        'job.data': 'after.id, before.id',
        'job.id': 'fixed',
        'job.attempts': '0',
        'job.backoff.type': 'linear',
        'job.priority': 'high',
        'job.delay.ms': '-5',
        'job.remove.on.complete': 'yes',
        'job.remove.on.fail': '0s',
        ordering: 'strict',
        'behavior.on.null.values': 'write',
        'batch.size': '0',
        'redis.port': '70000',
      }),
    ).toEqual({
      'queue.name':
        'unknown placeholder ${tabel}; use ${topic}, ${partition}, ${table}, ${schema}, ${db}, ${key}, ${key.<field>} or ${value.<field>}',
      'job.name': 'unclosed ${ at position 0',
      'job.data': "'after.id' and 'before.id' would both be the job data's 'id'",
      'job.id':
        'expected record, key, or a template such as ${value.after.id}; a fixed id would give every record the same job',
      'job.attempts': 'must be at least 1',
      'job.backoff.type': 'must be one of , fixed, exponential',
      'job.priority': 'expected a whole number or one field placeholder such as ${value.priority}',
      'job.delay.ms': 'expected a whole number or one field placeholder such as ${value.priority}',
      'job.remove.on.complete':
        'expected true, false, a count of jobs to keep, or an age such as 3600s, 30m, 24h, 7d',
      'job.remove.on.fail': 'an age must be more than 0',
      ordering: 'must be one of none, key',
      'behavior.on.null.values': 'must be one of ignore, fail, delete',
      'batch.size': 'must be between 1 and 100000',
      'redis.port': 'must be between 1 and 65535',
    });
  });

  it('refuses combinations that would be ignored, and keys of its namespaces it does not know', () => {
    expect(
      problems({
        ...ok,
        'job.id.from.key': 'true',
        'queue.names': 'a',
        'behavior.on.null.values': 'delete',
        'job.backoff.type': 'fixed',
      }),
    ).toEqual({
      'job.id.from.key': expect.stringMatching(
        /^is not a key of the BullMQ sink; its keys are redis\.url, /,
      ),
      'queue.names': expect.stringMatching(/^is not a key of the BullMQ sink/),
      'behavior.on.null.values':
        'delete removes the waiting job of the record key, so it needs job.id=key',
      'job.backoff.type': 'a back-off applies between attempts: set job.attempts above 1',
      'job.backoff.delay': 'job.backoff.type=fixed needs a delay above 0 ms',
    });
    expect(problems({ ...ok, 'job.backoff.delay': '100' })).toEqual({
      'job.backoff.delay': 'has no effect without job.backoff.type (fixed or exponential)',
    });
    expect(problems({ ...ok, 'job.id': '${value.after.id}' })).toEqual({
      'job.id':
        'a lone placeholder may render an integer, which BullMQ refuses as a job id: add fixed text, e.g. row-${value.after.id}',
    });
    expect(
      problems({
        ...ok,
        'queue.name': 'cdc-${table}',
        'job.id': 'key',
        'behavior.on.null.values': 'delete',
      }),
    ).toEqual({
      'queue.name':
        'with behavior.on.null.values=delete a tombstone must find its queue, but it has no value: use only ${topic}, ${partition} and ${key...} placeholders',
    });
    expect(problems({ ...ok, 'queue.name': 'a:b' })).toEqual({
      'queue.name': "BullMQ queue names cannot contain ':'",
    });
  });

  it('accepts ordering=key only with job.id=record, naming both keys otherwise', () => {
    expect(problems({ ...ok, ordering: 'key' })).toEqual({});
    expect(problems({ ...ok, ordering: 'key', 'job.id': 'key' })).toEqual({
      ordering:
        "ordering=key needs job.id=record (one job per record, so a key's jobs keep their record order), not job.id=key",
    });
    expect(problems({ ...ok, ordering: 'key', 'job.id': 'row-${value.after.id}' })).toEqual({
      ordering:
        "ordering=key needs job.id=record (one job per record, so a key's jobs keep their record order), not job.id=row-${value.after.id}",
    });
  });

  it('fails validation when Redis is unreachable, refuses the password or has no such database', async () => {
    const port = await freePort();
    expect(problems({ ...ok, 'redis.url': `redis://127.0.0.1:${port}` })).toEqual({
      'redis.url': `Redis at redis://127.0.0.1:${port}/0 is not usable: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:${port}`,
    });
    expect(problems({ ...ok, 'redis.password': 'secret' })['redis.url']).toMatch(
      /is not usable: .*AUTH/,
    );
    expect(problems({ ...ok, 'redis.db': '100000' })['redis.url']).toMatch(
      /\/100000 is not usable: ERR DB index is out of range/,
    );
    expect(problems({ ...ok, 'redis.url': 'http://127.0.0.1:6379' })).toEqual({
      'redis.url': 'expected the redis:// or rediss:// scheme, not http://',
    });
  });

  it('takes Redis from the URL with each redis.* key overriding its part, the password hidden', () => {
    const parsed = parseConfig(bullmqSinkConfigDefs, {
      'redis.url': 'rediss://app:pw@cache.internal:6380/2',
      'redis.password': 'better',
      'redis.db': '3',
      'queue.name': '${topic}',
    });
    expect(toSinkConfig(parsed.values).redis).toEqual({
      host: 'cache.internal',
      port: 6380,
      username: 'app',
      password: 'better',
      db: 3,
      tls: true,
    });
    expect(bullmqSinkConfigDefs.find((d) => d.name === 'redis.password')?.type).toBe('password');
  });

  it('exports a manifest answering to connect.bullmq.BullMQSinkConnector and its short names', () => {
    const [manifest] = loadManifests(entry, 'connectors/bullmq-sink');
    expect(manifest && pluginNames(manifest)).toEqual([
      'connect.bullmq.BullMQSinkConnector',
      'BullMQSinkConnector',
      'BullMQSink',
    ]);
  });
});
