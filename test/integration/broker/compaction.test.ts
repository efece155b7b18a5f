import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMarker } from '../../../src/protocol/control-record.ts';
import {
  decodeRecords,
  iterateBatches,
  readBatchHeader,
} from '../../../src/protocol/record-batch.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { fetchPartition, RawClient } from '../../unit/broker/server/raw-client.ts';

// One broker for the file, its cleaner polling often.
let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker({
    config: { 'log.cleaner.backoff.ms': 100, 'transaction.state.log.num.partitions': 3 },
  });
});
afterAll(() => b?.stop());

const compactedTopic = (topic: string) => ({
  topic,
  configEntries: [
    { name: 'cleanup.policy', value: 'compact' },
    { name: 'segment.bytes', value: '4096' },
    { name: 'min.cleanable.dirty.ratio', value: '0.01' },
    { name: 'delete.retention.ms', value: '0' },
    { name: 'min.compaction.lag.ms', value: '0' },
  ],
});

/** Re-checks `condition` until it holds (the cleaner runs on its own schedule), or fails. */
async function eventually<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('log compaction through the broker', () => {
  it('a reader from the start sees the latest value per key, no expired tombstones, increasing offsets', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [compactedTopic('table')] });
    await admin.disconnect();
    const producer = kafka(b.bootstrap).producer();
    await producer.connect();
    const latest = new Map<string, string | null>();
    for (let round = 0; round < 50; round++) {
      const messages = Array.from({ length: 10 }, (_, k) => ({
        key: `key-${k}`,
        value: `r${round}-k${k}`,
      }));
      await producer.send({ topic: 'table', messages });
      for (const m of messages) latest.set(m.key, m.value);
    }
    // Delete three keys: tombstones.
    await producer.send({
      topic: 'table',
      messages: ['key-1', 'key-4', 'key-7'].map((key) => ({ key, value: null })),
    });
    for (const k of ['key-1', 'key-4', 'key-7']) latest.set(k, null);
    // Unique filler keys push everything above into inactive, cleanable segments.
    for (let i = 0; i < 100; i += 10) {
      await producer.send({
        topic: 'table',
        messages: Array.from({ length: 10 }, (_, j) => ({
          key: `filler-${i + j}`,
          value: 'x'.repeat(60),
        })),
      });
    }
    await producer.disconnect();

    const expected = [...latest]
      .filter(([, v]) => v !== null)
      .map(([k, v]) => `${k}=${v}`)
      .sort();
    const compacted = (rs: Awaited<ReturnType<typeof consumeAll>>) =>
      rs
        .filter((r) => r.key!.startsWith('key-'))
        .map((r) => `${r.key}=${r.value}`)
        .sort();
    const records = await eventually(
      () => consumeAll(b.bootstrap, 'table'),
      (rs) => JSON.stringify(compacted(rs)) === JSON.stringify(expected),
    );
    expect(compacted(records)).toEqual(expected);
    expect(records.filter((r) => r.value === null)).toEqual([]);
    expect(records.filter((r) => r.key!.startsWith('filler-'))).toHaveLength(100);
    const offsets = records.map((r) => r.offset);
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    expect(new Set(offsets).size).toBe(offsets.length);
    // Offsets keep their gaps: the last record is still at offset 50*10 + 3 + 100 - 1.
    expect(offsets.at(-1)).toBe(602);
  });

  it('a topic with committed and aborted transactions keeps exactly the committed records; finished markers go', async () => {
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [compactedTopic('txn-table')] });
    await admin.disconnect();
    const client = kafka(b.bootstrap);
    const producer = client.producer({
      transactionalId: 'compaction-txn',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    // Eight transactions over the same three keys: even ones commit, odd ones abort.
    for (let t = 0; t < 8; t++) {
      const txn = await producer.transaction();
      await txn.send({
        topic: 'txn-table',
        messages: [0, 1, 2].map((k) => ({ key: `key-${k}`, value: `t${t}-k${k}` })),
      });
      if (t % 2 === 0) await txn.commit();
      else await txn.abort();
    }
    await producer.disconnect();
    const expected = ['key-0=t6-k0', 'key-1=t6-k1', 'key-2=t6-k2'];

    // Non-transactional filler keeps rolling segments, so the cleaner keeps passing
    // over the transactions until only what is still needed is left: the last
    // committed transaction with its COMMIT, and the aborted last one's batch, emptied
    // but kept as the producer's last, with the ABORT that ends it.
    const filler = client.producer();
    await filler.connect();
    const raw = await RawClient.connect(b.port);
    let round = 0;
    try {
      const state = await eventually(
        async () => {
          await filler.send({
            topic: 'txn-table',
            messages: Array.from({ length: 10 }, (_, j) => ({
              key: `filler-${round}-${j}`,
              value: 'x'.repeat(200),
            })),
          });
          round++;
          return readAll(raw, 'txn-table');
        },
        (s) => s.markers.length === 2 && JSON.stringify(s.records) === JSON.stringify(expected),
      );
      expect(state).toEqual({ records: expected, markers: ['COMMIT', 'ABORT'] });
    } finally {
      raw.close();
      await filler.disconnect();
    }
    // What read_committed clients make of the cleaned log: librdkafka (kcat)...
    const committed = await consumeAll(b.bootstrap, 'txn-table', [
      '-X',
      'isolation.level=read_committed',
    ]);
    expect(
      committed
        .filter((r) => r.key!.startsWith('key-'))
        .map((r) => `${r.key}=${r.value}`)
        .sort(),
    ).toEqual(expected);
    expect(committed.filter((r) => r.key!.startsWith('filler-'))).toHaveLength(round * 10);
  });
});

/** Every batch of the partition, read_uncommitted: the `key-*` records and the markers, in log order. */
async function readAll(
  c: RawClient,
  topic: string,
): Promise<{ records: string[]; markers: string[] }> {
  const records: string[] = [];
  const markers: string[] = [];
  for (let offset = 0; ; ) {
    const part = (await fetchPartition(c, topic, 0, offset, { isolationLevel: 0 })).responses[0]
      .partitions[0];
    const buf = part.records as Buffer | null;
    let next = offset;
    for (const { position } of buf ? iterateBatches(buf) : []) {
      const h = readBatchHeader(buf!, position);
      next = h.baseOffset + h.lastOffsetDelta + 1;
      if (h.control) {
        const marker = readMarker(buf!, position);
        if (marker) markers.push(marker.commit ? 'COMMIT' : 'ABORT');
        continue;
      }
      for (const r of decodeRecords(buf!, position)) {
        const key = r.key?.toString() ?? '';
        if (r.offset >= offset && key.startsWith('key-')) records.push(`${key}=${r.value}`);
      }
    }
    if (next === offset || next >= Number(part.highWatermark)) break;
    offset = next;
  }
  return { records, markers };
}
