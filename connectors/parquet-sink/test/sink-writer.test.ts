import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ManualClock,
  Schemas,
  type SinkRecord,
  type TopicPartition,
} from '../../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from '../config.ts';
import type { EncoderPlacement } from '../file-encoder.ts';
import { LocalStore } from '../local-store.ts';
import type { ObjectStore } from '../object-store.ts';
import { readGroup } from '../recovery.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query, scan } from './duckdb.ts';
import { defaultPartitioner, orderRecords, sinkConfig, sinkRecord, T0 } from './fixtures.ts';
import { failAfter, failFirst, snapshot } from './stores.ts';

let dir: string;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parquet-sink-'));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  rmSync(dir, { recursive: true, force: true });
});

const ORDERS = 'shop.public.orders';
const tp = (partition = 0, topic = ORDERS): TopicPartition => ({ topic, partition });

function localStore(sub = 'lake'): LocalStore {
  return new LocalStore(pathToFileURL(join(dir, sub)).href);
}

async function sink(
  over: Partial<ParquetSinkConfig> = {},
  store: ObjectStore = localStore(),
  clock = new ManualClock(T0),
  options: { encoder?: EncoderPlacement } = {},
): Promise<ParquetSinkWriter> {
  const w = new ParquetSinkWriter(
    sinkConfig({ kind: 'local', url: '' }, over),
    store,
    clock,
    options,
  );
  cleanups.push(() => w.stop());
  return w;
}

describe('Parquet sink writer on a local folder', () => {
  it('writes CDC rows in files of flush.size records that DuckDB reads back with the same counts, sums and Hive columns', async () => {
    const w = await sink({ flushSize: 100 });
    await w.open([tp(0), tp(1)]);
    await w.put([...orderRecords(ORDERS, 0, 0, 250), ...orderRecords(ORDERS, 1, 0, 120)]);
    await w.flushed();

    expect(readdirSync(join(dir, 'lake/topics', ORDERS, 'partition=0')).sort()).toEqual([
      `${ORDERS}+0+0000000000.snappy.parquet`,
      `${ORDERS}+0+0000000100.snappy.parquet`,
    ]);
    const [agg] = await query(
      `SELECT count(*) AS n, sum(id) AS ids, sum(amount)::VARCHAR AS amount,
              count(DISTINCT partition) AS parts, min(updated_at)::VARCHAR AS first
       FROM ${scan(join(dir, 'lake/topics', ORDERS))}`,
    );
    const sent = [
      ...Array.from({ length: 200 }, (_, i) => i),
      ...Array.from({ length: 100 }, (_, i) => i),
    ];
    expect(agg).toEqual({
      n: 300n,
      ids: BigInt(sent.reduce((s, i) => s + 1000 + i, 0)),
      amount: (sent.reduce((s, i) => s + (i * 101 - 500), 0) / 100).toFixed(2),
      parts: 2n,
      first: '2026-11-28 22:30:00',
    });
    // Only durable data counts: 50 and 20 records are still buffered.
    expect(w.committableOffsets()).toEqual([
      { topic: ORDERS, partition: 0, offset: 200 },
      { topic: ORDERS, partition: 1, offset: 100 },
    ]);
  });

  it('rotates on rotate.interval.ms by record time, so files hold fixed time spans', async () => {
    const w = await sink({ flushSize: 1000, rotateIntervalMs: 30 * 60_000 });
    await w.open([tp()]);
    await w.put(orderRecords(ORDERS, 0, 0, 95)); // one record a minute
    await w.flushed();
    const written = w.writer(tp())?.written.map((k) => k.slice(k.lastIndexOf('+') + 1));
    expect(written).toEqual([
      '0000000000.snappy.parquet',
      '0000000030.snappy.parquet',
      '0000000060.snappy.parquet',
    ]);
    const rows = await query(
      `SELECT filename LIKE '%0030.snappy.parquet' AS second, count(*) AS n,
              (max(epoch_ms(shipped_at)) - min(epoch_ms(shipped_at))) AS span
       FROM read_parquet('${dir}/lake/topics/${ORDERS}/*/*.parquet', filename = true)
       GROUP BY ALL ORDER BY second`,
    );
    expect(rows.find((r) => r.second === true)).toEqual({
      second: true,
      n: 30n,
      span: 28n * 60_000n,
    });
  });

  it('puts each Field partition value in its own folder, all closed together as one group', async () => {
    const w = await sink({
      flushSize: 30,
      partitioner: {
        ...defaultPartitioner,
        className: 'FieldPartitioner',
        fieldNames: ['customer'],
      },
    });
    await w.open([tp()]);
    await w.put(orderRecords(ORDERS, 0, 0, 30));
    await w.flushed();
    const written = w.writer(tp())?.written ?? [];
    expect(written).toHaveLength(7);
    expect(written[0]).toBe(
      `topics/${ORDERS}/customer=customer-0/${ORDERS}+0+0000000000.snappy.parquet`,
    );
    const group = await readGroup(localStore(), written[3] as string);
    expect(group).toEqual({ topic: ORDERS, partition: 0, start: 0, end: 29, files: 7 });
    const rows = await query(
      `SELECT customer, count(*) AS n FROM ${scan(join(dir, 'lake/topics', ORDERS))} GROUP BY 1 ORDER BY 1`,
    );
    expect(rows[0]).toEqual({ customer: 'customer-0', n: 5n });
  });

  it('recovers the next offset from the store after a crash and replays to byte-identical files', async () => {
    const reference = await sink({ flushSize: 100 }, localStore('reference'));
    await reference.open([tp()]);
    await reference.put(orderRecords(ORDERS, 0, 0, 350));
    await reference.flushed();

    const store = localStore('crashed');
    const first = await sink({ flushSize: 100 }, store);
    expect(await first.open([tp()])).toEqual([]); // nothing in the store yet
    await first.put(orderRecords(ORDERS, 0, 0, 170)); // crash: 70 buffered records are lost
    await first.flushed();

    const second = await sink({ flushSize: 100 }, store);
    expect(await second.open([tp()])).toEqual([{ topic: ORDERS, partition: 0, offset: 100 }]);
    await second.put(orderRecords(ORDERS, 0, 100, 250));
    await second.flushed();

    expect(await snapshot(store)).toEqual(await snapshot(localStore('reference')));
  });

  it('resumes exactly after the last written offset when compaction left gaps', async () => {
    const records = orderRecords(ORDERS, 0, 0, 60).filter((r) => r.kafkaOffset % 3 !== 1);
    const first = await sink({ flushSize: 10 });
    await first.open([tp()]);
    await first.put(records.slice(0, 25)); // two files of 10; offsets up to 28 written
    await first.flushed();
    const second = await sink({ flushSize: 10 });
    const lastWritten = records[19]?.kafkaOffset as number;
    expect(await second.open([tp()])).toEqual([
      { topic: ORDERS, partition: 0, offset: lastWritten + 1 },
    ]);
  });

  it('replays a group cut short by a crash to its recorded boundary, even when the wall clock cut it', async () => {
    const partitioner = {
      ...defaultPartitioner,
      className: 'Field',
      fieldNames: ['status'],
    };
    const over = { flushSize: 1000, rotateScheduleIntervalMs: 60_000, partitioner };
    const records = orderRecords(ORDERS, 0, 0, 40);

    // Crash-free run: the schedule fires after offset 24.
    const clockA = new ManualClock(T0);
    const reference = await sink(over, localStore('reference'), clockA);
    await reference.open([tp()]);
    await reference.put(records.slice(0, 25));
    clockA.advance(60_000);
    await reference.put([]);
    await reference.flushed();

    // Same run, but the store fails after the first file of the group.
    const clockB = new ManualClock(T0);
    const store = failAfter(localStore('crashed'), 1);
    const crashing = await sink(over, store, clockB);
    await crashing.open([tp()]);
    await crashing.put(records.slice(0, 25));
    clockB.advance(60_000);
    await crashing.put([]);
    await expect(crashing.flushed()).rejects.toThrow(/injected failure/);

    // Restart much later: the clock alone would now cut elsewhere.
    const clockC = new ManualClock(T0 + 3_600_000);
    const restarted = await sink(over, localStore('crashed'), clockC);
    expect(await restarted.open([tp()])).toEqual([{ topic: ORDERS, partition: 0, offset: 0 }]);
    await restarted.put(records.slice(0, 30));
    await restarted.flushed();
    expect(await snapshot(localStore('crashed'))).toEqual(await snapshot(localStore('reference')));
    expect(restarted.committableOffsets()).toEqual([{ topic: ORDERS, partition: 0, offset: 25 }]);
  });

  it('handles null values per behavior.on.null.values: fail, ignore, or write the key in the tombstone folder', async () => {
    const tombstone = (offset: number) =>
      sinkRecord(ORDERS, 0, offset, null, { key: { id: 7 }, valueSchema: null });
    const records = [
      ...orderRecords(ORDERS, 0, 0, 3),
      tombstone(3),
      ...orderRecords(ORDERS, 0, 4, 2),
    ];

    const failing = await sink({ flushSize: 6, nullBehavior: 'fail' });
    await failing.open([tp()]);
    await expect(failing.put(records)).rejects.toMatchObject({
      kind: 'connect', // what the setting asks for, never an errant record for the DLQ
      message: expect.stringMatching(/shop.public.orders-0@3 has a null value/),
    });

    const ignoring = await sink({ flushSize: 5, nullBehavior: 'ignore' }, localStore('ignore'));
    await ignoring.open([tp()]);
    await ignoring.put(records);
    await ignoring.flushed();
    const [ignored] = await query(`SELECT count(*) AS n FROM ${scan(join(dir, 'ignore'))}`);
    expect(ignored).toEqual({ n: 5n });

    const writing = await sink(
      { flushSize: 6, nullBehavior: 'write', storeKeys: true },
      localStore('write'),
    );
    await writing.open([tp()]);
    await writing.put(records);
    await writing.flushed();
    // As Confluent writes it: the tombstone's key in the keys file of the tombstone
    // folder, no value file there; the other records' files hold only them.
    const file = (folder: string, start: number, view: string) =>
      `'${dir}/write/topics/${ORDERS}/${folder}/${ORDERS}+0+${String(start).padStart(10, '0')}${view}.snappy.parquet'`;
    expect(readdirSync(join(dir, 'write/topics', ORDERS, 'tombstone'))).toEqual([
      `${ORDERS}+0+0000000003.keys.snappy.parquet`,
    ]);
    expect(
      await query(`SELECT key.id AS key_id FROM read_parquet(${file('tombstone', 3, '.keys')})`),
    ).toEqual([{ key_id: 7n }]);
    const [values] = await query(
      `SELECT count(*) AS n, count(id) AS ids FROM read_parquet(${file('partition=0', 0, '')})`,
    );
    expect(values).toEqual({ n: 5n, ids: 5n });
  });

  it('infers schemas for schemaless JSON: new fields extend the file, a type change starts a new one', async () => {
    const json = (offset: number, value: unknown) => sinkRecord('events', 0, offset, value);
    const records = [
      json(0, { id: 1, name: 'a' }),
      json(1, { id: 2, name: 'b', tags: ['x'] }),
      json(2, { id: 3, price: 2.5 }),
      json(3, { id: 4, price: 3 }),
      json(4, { id: 'five' }),
      json(5, { id: 'six' }),
    ];
    const w = await sink({ flushSize: 6, compatibility: 'BACKWARD' });
    await w.open([tp(0, 'events')]);
    await w.put(records);
    await w.put([6, 7, 8, 9].map((o) => json(o, { id: `#${o}` })));
    await w.flushed();
    expect(w.writer(tp(0, 'events'))?.written.map((k) => k.slice(-19))).toEqual([
      '0000.snappy.parquet',
      '0004.snappy.parquet',
    ]);
    const path = join(dir, 'lake/topics/events/partition=0');
    const first = await query(
      `SELECT id, name, tags::VARCHAR AS tags, price FROM read_parquet('${path}/events+0+0000000000.snappy.parquet') ORDER BY id`,
    );
    expect(first).toEqual([
      { id: 1n, name: 'a', tags: null, price: null },
      { id: 2n, name: 'b', tags: '[x]', price: null },
      { id: 3n, name: null, tags: null, price: 2.5 },
      { id: 4n, name: null, tags: null, price: 3 },
    ]);

    const strict = await sink({ flushSize: 6, compatibility: 'NONE' }, localStore('none'));
    await strict.open([tp(0, 'events')]);
    await strict.put(records);
    await strict.flushed();
    // NONE: every schema change is a new file: {id,name} | +tags | {id,price} | id as text (open).
    expect(strict.writer(tp(0, 'events'))?.written.map((k) => k.slice(-19))).toEqual([
      '0000.snappy.parquet',
      '0001.snappy.parquet',
      '0002.snappy.parquet',
    ]);
  });

  it('keeps buffered data under buffer.memory.max.bytes by writing the largest partitions early', async () => {
    const cap = 1024 * 1024;
    const w = await sink({ flushSize: 1_000_000, memoryMaxBytes: cap });
    const partitions = [0, 1, 2, 3].map((p) => tp(p));
    await w.open(partitions);
    let peak = 0;
    for (let batch = 0; batch < 20; batch++) {
      await w.put(partitions.flatMap((p) => orderRecords(ORDERS, p.partition, batch * 500, 500)));
      peak = Math.max(peak, w.bufferedBytes);
    }
    expect(peak).toBeLessThanOrEqual(cap);
    await w.flushed();
    const [agg] = await query(`SELECT count(*) AS n FROM ${scan(join(dir, 'lake'))}`);
    expect(Number(agg?.n)).toBeGreaterThan(0);
    const committed = w.committableOffsets().reduce((n, o) => n + o.offset, 0);
    expect(Number(agg?.n)).toBe(committed);
  });

  it('writes Debezium envelopes as nested structs that DuckDB reads with dotted paths', async () => {
    const row = Schemas.struct([
      ['id', Schemas.int64()],
      ['status', Schemas.string({ optional: true })],
    ]);
    const envelope = Schemas.struct([
      ['before', { ...row, optional: true }],
      ['after', { ...row, optional: true }],
      [
        'source',
        Schemas.struct([
          ['lsn', Schemas.int64()],
          ['table', Schemas.string()],
        ]),
      ],
      ['op', Schemas.string()],
      ['ts_ms', Schemas.int64({ optional: true })],
    ]);
    const change = (offset: number, op: string, before: unknown, after: unknown) =>
      sinkRecord(
        ORDERS,
        0,
        offset,
        {
          before,
          after,
          source: { lsn: 1000 + offset, table: 'orders' },
          op,
          ts_ms: T0 + offset,
        },
        { valueSchema: envelope },
      );
    const w = await sink({ flushSize: 3 });
    await w.open([tp()]);
    await w.put([
      change(0, 'c', null, { id: 1, status: 'NEW' }),
      change(1, 'u', { id: 1, status: 'NEW' }, { id: 1, status: 'PAID' }),
      change(2, 'd', { id: 1, status: 'PAID' }, null),
    ]);
    await w.flushed();
    const rows = await query(
      `SELECT op, before.status AS was, after.status AS now, source.lsn AS lsn
       FROM ${scan(join(dir, 'lake'))} ORDER BY lsn`,
    );
    expect(rows).toEqual([
      { op: 'c', was: null, now: 'NEW', lsn: 1000n },
      { op: 'u', was: 'NEW', now: 'PAID', lsn: 1001n },
      { op: 'd', was: 'PAID', now: null, lsn: 1002n },
    ]);
  });
});

describe('Parquet sink writer uploads in the background', () => {
  it('encodes files on the encoder thread to the same bytes as on the task thread', async () => {
    const records = [...orderRecords(ORDERS, 0, 0, 250), ...orderRecords(ORDERS, 1, 0, 120)];
    const inline = await sink({ flushSize: 100 }, localStore('inline'), new ManualClock(T0), {
      encoder: 'inline',
    });
    const threaded = await sink({ flushSize: 100 }, localStore('threaded'), new ManualClock(T0), {
      encoder: 'thread',
    });
    for (const w of [inline, threaded]) {
      await w.open([tp(0), tp(1)]);
      await w.put(records);
      await w.flushed();
    }
    const files = await snapshot(localStore('threaded'));
    expect(files.size).toBe(3);
    expect(files).toEqual(await snapshot(localStore('inline')));
    expect(threaded.committableOffsets()).toEqual(inline.committableOffsets());
  });

  it('commits nothing of a group whose upload failed, and uploads it again on the next put', async () => {
    const store = failFirst(localStore(), 2);
    const w = await sink({ flushSize: 50 }, store);
    await w.open([tp()]);
    await w.put(orderRecords(ORDERS, 0, 0, 120));
    // The background upload fails, and so does the retry flushed() makes.
    await expect(w.flushed()).rejects.toMatchObject({
      kind: 'retriable',
      message: expect.stringMatching(/store unavailable/),
    });
    expect(w.committableOffsets()).toEqual([]);
    await w.put([]);
    await w.flushed();
    expect(w.committableOffsets()).toEqual([{ topic: ORDERS, partition: 0, offset: 100 }]);
    expect(w.writer(tp())?.written).toHaveLength(2);
  });

  it('refuses an int64 out of range at put, naming the record and the column', async () => {
    const schema = Schemas.struct([['n', Schemas.int64()]]);
    const w = await sink({ flushSize: 2 }, localStore());
    await w.open([tp()]);
    await expect(
      w.put([sinkRecord(ORDERS, 0, 0, { n: 2n ** 64n }, { valueSchema: schema })]),
    ).rejects.toMatchObject({
      name: 'DataException',
      message: expect.stringMatching(
        /@0 does not fit .*column 'n': .* out of the 64-bit integer range/,
      ),
    });
  });

  it('reports an encoding error from the encoder thread as the upload failure, naming its cause', async () => {
    // Nested columns are checked only by hyparquet-writer, as it encodes.
    const schema = Schemas.struct([['s', Schemas.struct([['n', Schemas.int64()]])]]);
    const w = await sink({ flushSize: 2 }, localStore(), new ManualClock(T0), {
      encoder: 'thread',
    });
    await w.open([tp()]);
    await w.put(
      [0, 1].map((o) => sinkRecord(ORDERS, 0, o, { s: { n: 2n ** 64n } }, { valueSchema: schema })),
    );
    await expect(w.flushed()).rejects.toThrow(/Parquet encoding failed: .*out of range/);
    expect(w.committableOffsets()).toEqual([]);
    expect(await localStore().list('')).toEqual([]);
  });
});

describe('Parquet sink writer with an errant record reporter (errors.tolerance=all)', () => {
  const schema = Schemas.struct([
    ['n', Schemas.int8()],
    ['tag', Schemas.string()],
  ]);
  /** Offsets 0..count-1; the values at `bad` do not fit INT_8. */
  const rows = (from: number, to: number, bad: readonly number[]) =>
    Array.from({ length: to - from }, (_, k) => {
      const offset = from + k;
      const n = bad.includes(offset) ? 300 + offset : offset;
      return sinkRecord(ORDERS, 0, offset, { n, tag: `t${offset % 4}` }, { valueSchema: schema });
    });
  const BAD = [3, 17];

  function reporter() {
    const reported: Array<{ offset: number; error: Error }> = [];
    return {
      reported,
      reportErrant: async (record: SinkRecord, error: Error) => {
        reported.push({ offset: record.kafkaOffset, error });
      },
    };
  }

  /** A writer given the reporter, not opened yet. */
  function tolerant(
    store: ObjectStore,
    report: ReturnType<typeof reporter>,
    over: Partial<ParquetSinkConfig> = { flushSize: 10 },
  ) {
    const w = new ParquetSinkWriter(
      sinkConfig({ kind: 'local', url: '' }, over),
      store,
      new ManualClock(T0),
      { reportErrant: report.reportErrant },
    );
    cleanups.push(() => w.stop());
    return w;
  }

  it('reports each record that does not fit, writes the others, and commits past both', async () => {
    const report = reporter();
    const w = tolerant(localStore(), report);
    await w.open([tp()]);
    await w.put(rows(0, 18, BAD)); // ends with an errant record
    // The runner hands records again after a retriable failure: nothing is taken or
    // reported twice.
    await w.put(rows(15, 25, BAD));
    await w.flushed();
    expect(report.reported.map((r) => r.offset)).toEqual(BAD);
    expect(report.reported[0]?.error).toMatchObject({
      name: 'DataException',
      message: expect.stringMatching(/orders-0@3 does not fit .*column 'n'/),
    });
    // flush.size counts written rows: offsets 0-10 and 11-21 make two files of 10 rows,
    // each holding its skipped record's offset in its range; 22-24 stay buffered.
    expect(w.writer(tp())?.written).toEqual([
      `topics/${ORDERS}/partition=0/${ORDERS}+0+0000000000.snappy.parquet`,
      `topics/${ORDERS}/partition=0/${ORDERS}+0+0000000011.snappy.parquet`,
    ]);
    expect(w.committableOffsets()).toEqual([{ topic: ORDERS, partition: 0, offset: 22 }]);
    const [agg] = await query(
      `SELECT count(*) AS n, sum(n) AS total, max(n) AS top FROM ${scan(join(dir, 'lake/topics'))}`,
    );
    const written = Array.from({ length: 22 }, (_, i) => i).filter((i) => !BAD.includes(i));
    expect(agg).toEqual({
      n: BigInt(written.length),
      total: BigInt(written.reduce((a, b) => a + b)),
      top: 21,
    });
  });

  it('replays a crash to byte-identical files, reporting again only what was not durable', async () => {
    const reference = tolerant(localStore('reference'), reporter());
    await reference.open([tp()]);
    await reference.put(rows(0, 30, BAD));
    await reference.flushed();

    const store = localStore('crashed');
    const first = tolerant(store, reporter());
    await first.open([tp()]);
    await first.put(rows(0, 15, BAD)); // crash: offsets 11-14 are buffered and lost
    await first.flushed();
    const report = reporter();
    const second = tolerant(store, report);
    expect(await second.open([tp()])).toEqual([{ topic: ORDERS, partition: 0, offset: 11 }]);
    await second.put(rows(11, 30, BAD));
    await second.flushed();
    expect(report.reported.map((r) => r.offset)).toEqual([17]);
    expect(await snapshot(store)).toEqual(await snapshot(localStore('reference')));
  });

  it('reports schema inference and partitioner failures as DataExceptions naming the record', async () => {
    const report = reporter();
    const w = tolerant(localStore(), report, {
      flushSize: 4,
      partitioner: {
        ...defaultPartitioner,
        className: 'FieldPartitioner',
        fieldNames: ['tag'],
      },
    });
    await w.open([tp(0, 'events')]);
    const json = (offset: number, value: unknown) => sinkRecord('events', 0, offset, value);
    await w.put([
      json(0, { n: 0, tag: 'a' }),
      json(1, { n: 1, tag: 'a', xs: [1, 'x'] }), // no schema can be inferred
      json(2, { n: 2, tag: { nested: true } }), // not a primitive to partition by
      json(3, { n: 3, tag: 'b' }),
      json(4, { n: 4, tag: 'a' }),
      json(5, { n: 5, tag: 'b' }),
    ]);
    await w.flushed();
    expect(report.reported.map((r) => [r.offset, r.error.name])).toEqual([
      [1, 'DataException'],
      [2, 'DataException'],
    ]);
    expect(report.reported[0]?.error.message).toMatch(
      /record events-0@1 cannot be written: array elements have different types/,
    );
    expect(report.reported[1]?.error.message).toMatch(/'tag' of events-0@2 is not a primitive/);
    const rows = await query(
      `SELECT tag, count(*) AS n FROM ${scan(join(dir, 'lake/topics/events'))} GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { tag: 'a', n: 2n },
      { tag: 'b', n: 2n },
    ]);
  });

  it('without a reporter the same records fail put, and a null under behavior.on.null.values=fail is never reported', async () => {
    const strict = await sink({ flushSize: 10 });
    await strict.open([tp()]);
    await expect(strict.put(rows(0, 5, BAD))).rejects.toMatchObject({
      name: 'DataException',
      message: expect.stringMatching(/@3 does not fit/),
    });

    const report = reporter();
    const w = tolerant(localStore('nulls'), report);
    await w.open([tp()]);
    await expect(
      w.put([...rows(0, 2, []), sinkRecord(ORDERS, 0, 2, null, { valueSchema: null })]),
    ).rejects.toMatchObject({ kind: 'connect', message: expect.stringMatching(/@2 has a null/) });
    expect(report.reported).toEqual([]);
  });
});
