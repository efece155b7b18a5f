import { describe, expect, it } from 'vitest';
import type { GroupCoordinator } from '../../../src/broker/group/group-coordinator.ts';
import type { LogManager } from '../../../src/broker/log/log-manager.ts';
import { BrokerMetrics, recordFetched } from '../../../src/broker/metrics/broker-metrics.ts';
import type { ConnectionInfo } from '../../../src/broker/server/socket-server.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

/** A frame whose first two bytes are the api key, as the request router reads it. */
function frame(apiKey: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeInt16BE(apiKey, 0);
  return b;
}

/** Two v2 batch headers (61 bytes each, no records after them): 3 and 4 records. */
function batches(): Buffer {
  const one = (count: number) => {
    const b = Buffer.alloc(61);
    b.writeInt32BE(61 - 12, 8); // batch length: everything after the 12-byte log overhead
    b.writeInt32BE(count, 57);
    return b;
  };
  return Buffer.concat([one(3), one(4)]);
}

const connection = {} as ConnectionInfo;

describe('BrokerMetrics', () => {
  it('counts and times requests by api, synchronous and asynchronous answers alike', async () => {
    const metrics = new BrokerMetrics({ processMetrics: false });
    const sync = metrics.instrument(() => Buffer.alloc(0));
    const async = metrics.instrument(() => Promise.resolve(null));
    sync(frame(3), connection, () => {}); // Metadata
    sync(frame(3), connection, () => {});
    await async(frame(0), connection, () => {}); // Produce
    const f = parsePrometheusText(await metrics.text());
    expect(
      sampleOf(f, 'kafka_network_requestmetrics_requests_total', { request: 'Metadata' }),
    ).toBe(2);
    expect(sampleOf(f, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBe(
      1,
    );
    const name = 'kafka_network_requestmetrics_totaltimems';
    expect(f.get(name)?.type).toBe('histogram');
    expect(sampleOf(f, name, { request: 'Metadata' }, `${name}_count`)).toBe(2);
    expect(sampleOf(f, name, { request: 'Metadata', le: '+Inf' }, `${name}_bucket`)).toBe(2);
    // Buckets are cumulative.
    const buckets = f
      .get(name)!
      .samples.filter((s) => s.name === `${name}_bucket` && s.labels.request === 'Metadata');
    for (let i = 1; i < buckets.length; i++)
      expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  });

  it('counts fetched bytes and records per topic from the batch headers answered', async () => {
    const metrics = new BrokerMetrics({ processMetrics: false });
    const records = batches();
    recordFetched(metrics, [
      { topic: 'orders', partitions: [{ records }, { records: Buffer.alloc(0) }] },
    ]);
    metrics.topic('orders').bytesIn += 10;
    const f = parsePrometheusText(await metrics.text());
    expect(
      sampleOf(f, 'kafka_server_brokertopicmetrics_messagesout_total', { topic: 'orders' }),
    ).toBe(7);
    expect(sampleOf(f, 'kafka_server_brokertopicmetrics_bytesout_total', { topic: 'orders' })).toBe(
      records.length,
    );
    expect(sampleOf(f, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: 'orders' })).toBe(
      10,
    );
  });

  it('reads partitions, log sizes, groups and connections from the broker at scrape time, and forgets deleted topics', async () => {
    const metrics = new BrokerMetrics({ processMetrics: false });
    let exists = true;
    const logs = {
      topics: () => (exists ? [{ name: 't', topicId: 'x', partitions: 2, configs: {} }] : []),
      topic: (name: string) => (exists && name === 't' ? {} : undefined),
      getLog: (_t: string, p: number) => ({
        size: 100 + p,
        segments: [1, 2],
        logStartOffset: 0,
        logEndOffset: 5,
      }),
    } as unknown as LogManager;
    const coordinator = {
      listGroups: () => [
        { groupId: 'a', protocolType: 'consumer', state: 'Stable' },
        { groupId: 'b', protocolType: 'connect', state: 'Empty' },
      ],
    } as unknown as GroupCoordinator;
    metrics.attach({ logs, coordinator, connectionCount: () => 4 });
    metrics.topic('t').messagesIn += 1;
    let f = parsePrometheusText(await metrics.text());
    expect(sampleOf(f, 'kafka_server_replicamanager_partitioncount')).toBe(2);
    expect(sampleOf(f, 'kafka_log_log_size', { topic: 't', partition: '1' })).toBe(101);
    expect(sampleOf(f, 'kafka_log_log_numlogsegments', { topic: 't', partition: '0' })).toBe(2);
    expect(sampleOf(f, 'kafka_coordinator_group_groupmetadatamanager_numgroups')).toBe(2);
    expect(sampleOf(f, 'kafka_coordinator_group_groupmetadatamanager_numgroupsstable')).toBe(1);
    expect(sampleOf(f, 'kafka_server_socket_server_metrics_connection_count')).toBe(4);
    exists = false;
    f = parsePrometheusText(await metrics.text());
    expect(f.get('kafka_server_brokertopicmetrics_messagesin_total')?.samples).toEqual([]);
  });

  it('time produce and fetch purgatory waits as RemoteTimeMs histograms and count the requests waiting', async () => {
    const metrics = new BrokerMetrics({ processMetrics: false });
    metrics.purgatoryEntered('Fetch');
    metrics.purgatoryEntered('Fetch');
    metrics.purgatoryLeft('Fetch');
    metrics.recordRemoteTime('Fetch', 0); // answered at once
    metrics.recordRemoteTime('Fetch', 480); // a long poll
    metrics.recordRemoteTime('Produce', 3);
    const f = parsePrometheusText(await metrics.text());
    const size = 'kafka_server_delayedoperationpurgatory_purgatorysize';
    expect(sampleOf(f, size, { delayedoperation: 'Fetch' })).toBe(1);
    expect(sampleOf(f, size, { delayedoperation: 'Produce' })).toBe(0);
    const name = 'kafka_network_requestmetrics_remotetimems';
    expect(f.get(name)?.type).toBe('histogram');
    const fetch = { request: 'Fetch' };
    expect(sampleOf(f, name, fetch, `${name}_count`)).toBe(2);
    expect(sampleOf(f, name, fetch, `${name}_sum`)).toBe(480);
    expect(sampleOf(f, name, { ...fetch, le: '0.1' }, `${name}_bucket`)).toBe(1);
    expect(sampleOf(f, name, { ...fetch, le: '500' }, `${name}_bucket`)).toBe(2);
    expect(sampleOf(f, name, { request: 'Produce' }, `${name}_count`)).toBe(1);
  });
});
