import { describe, expect, it } from 'vitest';
import { parseConfig, type SinkRecord } from '../../../src/connect/api/index.ts';
import { bullmqSinkConfigDefs, toSinkConfig } from '../config.ts';
import { JobMapper, keyText } from '../job-mapper.ts';
import { changeEvent, ORDERS, tombstone } from './support.ts';

function mapper(raw: Record<string, string>): JobMapper {
  const parsed = parseConfig(bullmqSinkConfigDefs, { 'queue.name': 'q', ...raw });
  expect(parsed.errors).toEqual([]);
  return new JobMapper(toSinkConfig(parsed.values));
}

describe('JobMapper', () => {
  it('renders queue and job names from the topic, the Debezium source and value fields', () => {
    const m = mapper({
      'queue.name': '${db}-${schema}-${table}',
      'job.name': '${topic}/${value.op}/${key.id}',
    });
    expect(m.map(changeEvent(5, 42, 'u'))).toMatchObject({
      kind: 'add',
      queue: 'shop-public-orders',
      name: `${ORDERS}/u/42`,
    });
  });

  it('takes job data from the value, the row image, or a list of fields', () => {
    const e = changeEvent(0, 1, 'c', { big: 2n ** 64n, raw: new Uint8Array([1, 2]) });
    expect(mapper({ 'job.data': 'value' }).map(e)).toMatchObject({
      data: { op: 'c', after: { id: 1 } },
    });
    expect(mapper({ 'job.data': 'after' }).map(e)).toMatchObject({
      data: { id: 1, status: 'new', amount: 10, big: '18446744073709551616', raw: 'AQI=' },
    });
    expect(mapper({ 'job.data': 'op, after.id, source.lsn' }).map(e)).toMatchObject({
      data: { op: 'c', id: 1, lsn: 1000 },
    });
  });

  it('names the record and the missing piece when a field or an envelope is absent', () => {
    const plain: SinkRecord = { ...changeEvent(3, 1, 'c'), value: { id: 1 } };
    expect(() => mapper({ 'job.data': 'after' }).map(plain)).toThrow(
      `record ${ORDERS}-0@3: job.data=after needs a Debezium envelope with op and the after (or, for a delete, before) row; the value has none`,
    );
    expect(() => mapper({ 'queue.name': '${table}' }).map(plain)).toThrow(
      `record ${ORDERS}-0@3: '\${table}' needs source.table of a Debezium envelope, which the value lacks`,
    );
    expect(() => mapper({ 'job.name': '${value.after}' }).map(changeEvent(4, 1, 'c'))).toThrow(
      `record ${ORDERS}-0@4: '\${value.after}' needs value.after, which is not a scalar (object)`,
    );
  });

  it('derives job ids from the record, the key or a template, always valid for BullMQ', () => {
    const e = changeEvent(9, 42, 'c');
    expect(mapper({}).map(e)).toMatchObject({ opts: { jobId: `${ORDERS}-0-9` } });
    expect(mapper({ 'job.id': 'key' }).map(e)).toMatchObject({ opts: { jobId: `${ORDERS}/42` } });
    expect(mapper({ 'job.id': 'order-${value.after.id}' }).map(e)).toMatchObject({
      opts: { jobId: 'order-42' },
    });
    expect(mapper({ 'job.id': 'key' }).map({ ...e, key: 'a:b%c' })).toMatchObject({
      opts: { jobId: `${ORDERS}/a%3Ab%25c` },
    });
    expect(keyText({ tenant: 't1', id: 7 })).toBe('t1,7');
  });

  it('with ordering=key puts each job in the set of its partition and key, and refuses a keyless record', () => {
    const m = mapper({ ordering: 'key', 'queue.prefix': 'app' });
    expect(m.map(changeEvent(9, 42, 'c', {}, 3))).toMatchObject({
      opts: { jobId: `${ORDERS}-3-9` },
      order: { set: `app:q:key-order:${ORDERS}:3:42`, score: 9 },
    });
    expect(m.map({ ...changeEvent(10, 1, 'c'), key: 'a:b' })).toMatchObject({
      order: { set: `app:q:key-order:${ORDERS}:0:a%3Ab`, score: 10 },
    });
    expect(mapper({}).map(changeEvent(9, 42, 'c'))).not.toHaveProperty('order');
    expect(() => m.map({ ...changeEvent(11, 1, 'c'), key: null })).toThrow(
      `record ${ORDERS}-0@11 has no key, but ordering=key orders the jobs of each record key`,
    );
  });

  it('sets priority and delay fixed or from a field, and refuses non-numbers', () => {
    const m = mapper({
      'job.priority': '${value.after.amount}',
      'job.delay.ms': '2500',
      'job.lifo': 'true',
    });
    expect(m.map(changeEvent(0, 1, 'c'))).toMatchObject({
      opts: { priority: 10, delay: 2500, lifo: true },
    });
    expect(() => m.map(changeEvent(1, 1, 'c', { amount: 'lots' }))).toThrow(
      `record ${ORDERS}-0@1: job.priority from '\${value.after.amount}' is 'lots', not a whole number`,
    );
  });

  it('ignores, fails on, or deletes by key for tombstones as behavior.on.null.values says', () => {
    expect(mapper({}).map(tombstone(2, 5))).toEqual({ kind: 'skip' });
    // A tombstone has no source.table; ignoring it needs none.
    expect(mapper({ 'queue.name': 'cdc-${table}' }).map(tombstone(3, 5))).toEqual({ kind: 'skip' });
    expect(() => mapper({ 'behavior.on.null.values': 'fail' }).map(tombstone(2, 5))).toThrow(
      `record ${ORDERS}-0@2 has a null value (a tombstone) and behavior.on.null.values=fail`,
    );
    expect(
      mapper({ 'behavior.on.null.values': 'delete', 'job.id': 'key' }).map(tombstone(2, 5)),
    ).toEqual({
      kind: 'delete',
      queue: 'q',
      jobId: `${ORDERS}/5`,
    });
  });
});
