import { describe, expect, it } from 'vitest';
import { Schemas } from '../../../src/connect/api/index.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { EncoderPool, sharedEncoderPool } from '../encoder-thread.ts';
import { FileEncoder } from '../file-encoder.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { toParquetSchema } from '../schema-mapping.ts';

const schema = toParquetSchema(
  Schemas.struct([
    ['n', Schemas.int64()],
    ['s', Schemas.string()],
  ]),
);

/** A file's worth of buffered rows; `take()` hands them over for good, so one per use. */
function rows(count: number, seed = 0) {
  const buffer = new RowBuffer(schema);
  for (let i = 0; i < count; i++) buffer.append({ n: seed + i, s: `s${(seed + i) % 7}` });
  const bytes = buffer.estimatedBytes;
  return { columns: buffer.take(), bytes };
}

const options = { codec: 'snappy' as const, kv: [{ key: 'k', value: 'v' }] };

describe('Parquet encoder threads shared by the process', () => {
  it('serves every file encoder of the process from the same threads, already loaded for a later task', async () => {
    const pool = sharedEncoderPool();
    // Two tasks' encoders, each insisting on a thread: they get the same one.
    const first = new FileEncoder('thread');
    const second = new FileEncoder('thread');
    const a = rows(5000, 0);
    const b = rows(5000, 1);
    const [fromFirst, fromSecond] = await Promise.all([
      first.encode(schema, a.columns, a.bytes, options),
      second.encode(schema, b.columns, b.bytes, options),
    ]);
    expect(pool.started).toBe(1);
    expect(Buffer.from(fromFirst)).toEqual(
      Buffer.from(encodeParquet(schema, rows(5000, 0).columns, options)),
    );
    expect(Buffer.from(fromSecond)).toEqual(
      Buffer.from(encodeParquet(schema, rows(5000, 1).columns, options)),
    );
    // A later task finds the thread loaded and idle: auto placement takes it at once.
    const c = rows(100_000, 2);
    expect(c.bytes).toBeGreaterThanOrEqual(1024 * 1024);
    expect(pool.idle()).toBeDefined();
    const third = new FileEncoder('auto');
    const encoding = third.encode(schema, c.columns, c.bytes, options);
    expect(pool.idle()).toBeUndefined(); // the file went to the thread
    expect(Buffer.from(await encoding)).toEqual(
      Buffer.from(encodeParquet(schema, rows(100_000, 2).columns, options)),
    );
  });

  it('starts threads on demand, one at a time and up to its size', async () => {
    const pool = new EncoderPool(2);
    expect(pool.started).toBe(0);
    pool.prepare();
    expect(pool.started).toBe(1);
    pool.grow(); // the first is still loading: it takes the next file
    expect(pool.started).toBe(1);
    await waitFor('the first thread loaded', () => pool.idle());
    const encoder = new FileEncoder('thread', pool);
    const big = rows(20_000);
    const busy = encoder.encode(schema, big.columns, big.bytes, options);
    pool.grow(); // the only loaded thread is busy: start another
    expect(pool.started).toBe(2);
    pool.grow();
    expect(pool.started).toBe(2);
    await busy;
    await waitFor('both threads idle', () =>
      pool.idle() !== undefined && pool.leastBusy().pending === 0 ? true : undefined,
    );
  });
});
