import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Schemas } from '../../../src/connect/api/index.ts';
import {
  DEFAULT_DELIMITERS,
  fileName,
  objectKey,
  parquetExtension,
  parseFileName,
} from '../file-naming.ts';
import { readFooter } from '../footer-reader.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { toParquetSchema } from '../schema-mapping.ts';

describe('file names', () => {
  const snappy = { padWidth: 10, delim: '+', extension: parquetExtension('snappy') };

  it("follow Confluent's <topics.dir>/<topic>/<partition>/<topic>+<partition>+<padded start offset>.snappy.parquet", () => {
    const name = fileName(
      { topic: 'shop.public.orders', kafkaPartition: 2, startOffset: 42 },
      snappy,
    );
    expect(objectKey('topics', 'shop.public.orders', 'partition=2', name)).toBe(
      'topics/shop.public.orders/partition=2/shop.public.orders+2+0000000042.snappy.parquet',
    );
  });

  it.each([
    ['snappy', '.snappy.parquet'],
    ['gzip', '.gz.parquet'],
    ['zstd', '.zstd.parquet'],
    ['brotli', '.br.parquet'],
    ['lz4_raw', '.lz4raw.parquet'],
    ['none', '.parquet'],
  ] as const)("carry parquet-mr's extension for parquet.codec=%s: %s", (codec, extension) => {
    expect(parquetExtension(codec)).toBe(extension);
  });

  it("name keys and headers files as Confluent's RecordViews do, and parse them apart from value files", () => {
    const c = { topic: 'orders', kafkaPartition: 1, startOffset: 5 };
    const none = { ...snappy, extension: '.parquet' };
    expect(fileName(c, snappy, 'keys')).toBe('orders+1+0000000005.keys.snappy.parquet');
    expect(fileName(c, snappy, 'headers')).toBe('orders+1+0000000005.headers.snappy.parquet');
    expect(parseFileName(`p/${fileName(c, none, 'keys')}`)).toEqual({
      ...c,
      extension: '.parquet',
      view: 'keys',
    });
    expect(
      parseFileName(`p/${fileName(c, snappy, 'headers')}`, DEFAULT_DELIMITERS, 'orders'),
    ).toEqual({
      ...c,
      extension: '.snappy.parquet',
      view: 'headers',
    });
    expect(parseFileName(`p/${fileName(c, none)}`)).toEqual({ ...c, extension: '.parquet' });
  });

  it('use file.delim, directory.delim and filename.offset.zero.pad.width', () => {
    const name = fileName(
      { topic: 'my_orders', kafkaPartition: 3, startOffset: 7 },
      { padWidth: 4, delim: '-', extension: '.parquet' },
    );
    const key = objectKey('lake', 'my_orders', 'partition=3', name, '_');

    expect(key).toBe('lake_my_orders_partition=3_my_orders-3-0007.parquet');
    expect(parseFileName(key, { delim: '-', dirDelim: '_' }, 'my_orders')).toEqual({
      topic: 'my_orders',
      kafkaPartition: 3,
      startOffset: 7,
      extension: '.parquet',
    });
  });

  it('parse back to the coordinates they were made from, for any topic, offset and codec', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z0-9._-]{1,40}$/),
        fc.nat(1000),
        fc.maxSafeNat(),
        fc.nat(20),
        fc.constantFrom('snappy', 'gzip', 'zstd', 'brotli', 'lz4_raw', 'none'),
        (topic, kafkaPartition, startOffset, padWidth, codec) => {
          const c = { topic, kafkaPartition, startOffset };
          const extension = parquetExtension(codec as 'snappy');
          const key = `a/b=c/${fileName(c, { padWidth, delim: '+', extension })}`;
          expect(parseFileName(key)).toEqual({ ...c, extension });
          expect(parseFileName(key, DEFAULT_DELIMITERS, topic)).toEqual({ ...c, extension });
        },
      ),
    );
    expect(parseFileName('topics/t/partition=0/.t+0+1.parquet.123.tmp')).toBeUndefined();
  });

  it("of this sink's earlier versions (.parquet whatever the codec) still parse", () => {
    expect(parseFileName('topics/t/partition=0/t+0+0000000010.parquet')).toEqual({
      topic: 't',
      kafkaPartition: 0,
      startOffset: 10,
      extension: '.parquet',
    });
  });
});

describe('Parquet footer', () => {
  it('gives back the row count and key-value metadata the encoder wrote', () => {
    const mapped = toParquetSchema(Schemas.struct([['a', Schemas.string()]]));
    const buffer = new RowBuffer(mapped);
    for (let i = 0; i < 5; i++) buffer.append({ a: `v${i}` });
    const bytes = encodeParquet(mapped, buffer.take(), {
      codec: 'zstd',
      kv: [
        { key: 'connect.group.end', value: '99' },
        { key: 'x', value: 'ü'.repeat(300) },
      ],
    });
    const footer = readFooter(bytes);
    expect(footer.numRows).toBe(5n);
    expect(footer.kv.get('connect.group.end')).toBe('99');
    expect(footer.kv.get('x')).toBe('ü'.repeat(300));
  });

  it('refuses bytes that are not a Parquet file', () => {
    expect(() => readFooter(new TextEncoder().encode('not a parquet file'))).toThrow(/PAR1/);
  });

  it('encodes identical input to identical bytes (no time or randomness in the file)', () => {
    const mapped = toParquetSchema(
      Schemas.struct([
        ['a', Schemas.int64()],
        ['b', Schemas.float64()],
      ]),
    );
    const make = () => {
      const buffer = new RowBuffer(mapped);
      for (let i = 0; i < 1000; i++) buffer.append({ a: i, b: i / 3 });
      return encodeParquet(mapped, buffer.take(), { codec: 'gzip', kv: [] });
    };
    expect(Buffer.from(make()).equals(Buffer.from(make()))).toBe(true);
  });
});
