import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Schemas } from '../../../src/connect/api/index.ts';
import { fileName, objectKey, parseFileName } from '../file-naming.ts';
import { readFooter } from '../footer-reader.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { toParquetSchema } from '../schema-mapping.ts';

describe('file names', () => {
  it('follow <topics.dir>/<topic>/<partition>/<topic>+<partition>+<padded start offset>.parquet', () => {
    const name = fileName({ topic: 'shop.public.orders', kafkaPartition: 2, startOffset: 42 }, 10);
    expect(objectKey('topics', 'shop.public.orders', 'partition=2', name)).toBe(
      'topics/shop.public.orders/partition=2/shop.public.orders+2+0000000042.parquet',
    );
  });

  it('parse back to the coordinates they were made from, for any topic and offset', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z0-9._-]{1,40}$/),
        fc.nat(1000),
        fc.maxSafeNat(),
        fc.nat(20),
        (topic, kafkaPartition, startOffset, pad) => {
          const c = { topic, kafkaPartition, startOffset };
          expect(parseFileName(`a/b=c/${fileName(c, pad)}`)).toEqual(c);
        },
      ),
    );
    expect(parseFileName('topics/t/partition=0/.t+0+1.parquet.123.tmp')).toBeUndefined();
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
