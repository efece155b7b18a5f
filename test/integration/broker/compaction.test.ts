import { describe, expect, it } from 'vitest';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBroker } from '../../helpers/broker.ts';

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
    const b = await useBroker({ config: { 'log.cleaner.backoff.ms': 100 } });
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic: 'table',
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'segment.bytes', value: '4096' },
            { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            { name: 'delete.retention.ms', value: '0' },
            { name: 'min.compaction.lag.ms', value: '0' },
          ],
        },
      ],
    });
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
});
