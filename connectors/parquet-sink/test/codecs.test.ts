/**
 * parquet.codec and parquet.compression.codec.zstd.level: every codec the sink writes,
 * through both encoders (flat and nested rows) and through the writer, read back by
 * DuckDB; the codecs it refuses, refused by name with what to use instead.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, parseConfig, Schemas } from '../../../src/connect/api/index.ts';
import type { ParquetCodec } from '../codecs.ts';
import { parquetSinkConfigDefs, toSinkConfig, validateSinkConfig } from '../config.ts';
import { FileEncoder } from '../file-encoder.ts';
import { parquetExtension } from '../file-naming.ts';
import { LocalStore } from '../local-store.ts';
import { encodeParquet } from '../parquet-encoder.ts';
import { RowBuffer } from '../row-buffer.ts';
import { toParquetSchema } from '../schema-mapping.ts';
import { ParquetSinkWriter } from '../sink-writer.ts';
import { query } from './duckdb.ts';
import { orderRecords, sinkConfig, T0 } from './fixtures.ts';

const CODECS: ReadonlyArray<[ParquetCodec, string]> = [
  ['snappy', 'SNAPPY'],
  ['gzip', 'GZIP'],
  ['zstd', 'ZSTD'],
  ['brotli', 'BROTLI'],
  ['lz4_raw', 'LZ4_RAW'],
  ['none', 'UNCOMPRESSED'],
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'codecs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const opt = { optional: true };
const flat = Schemas.struct([
  ['id', Schemas.int64()],
  ['name', Schemas.string(opt)],
  ['amount', Schemas.float64(opt)],
]);
const nested = Schemas.struct([
  ['id', Schemas.int64()],
  ['tags', Schemas.array(Schemas.string())],
]);

/** Enough repetitive rows that every codec has runs to compress, over several pages. */
const flatRows = Array.from({ length: 5000 }, (_, i) => ({
  id: i,
  name: i % 9 === 0 ? null : `customer-${i % 40}`,
  amount: i % 7 === 0 ? null : i / 4,
}));
const nestedRows = Array.from({ length: 500 }, (_, i) => ({
  id: i,
  tags: Array.from({ length: i % 4 }, (_, k) => `t${(i + k) % 6}`),
}));

function encode(
  schema: typeof flat,
  rows: Array<Record<string, unknown>>,
  codec: ParquetCodec,
  zstdLevel?: number,
): Uint8Array {
  const mapped = toParquetSchema(schema);
  const buffer = new RowBuffer(mapped);
  for (const r of rows) buffer.append(r);
  return encodeParquet(mapped, buffer.take(), { codec, zstdLevel, kv: [] });
}

function write(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

async function codecsOf(path: string): Promise<string[]> {
  const rows = await query(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`);
  return rows.map((r) => String(r.compression));
}

describe('parquet.codec', () => {
  it.each(CODECS)(
    '%s files of flat rows read back in DuckDB, every column chunk %s',
    async (codec, name) => {
      const path = write(`flat-${codec}.parquet`, encode(flat, flatRows, codec));

      const back = await query(`SELECT id, name, amount FROM read_parquet('${path}') ORDER BY id`);

      expect(back).toEqual(
        flatRows.map((r) => ({ id: BigInt(r.id), name: r.name, amount: r.amount })),
      );
      expect(await codecsOf(path)).toEqual([name]);
    },
  );

  it.each(CODECS)(
    '%s files of nested rows read back in DuckDB, every column chunk %s',
    async (codec, name) => {
      const path = write(`nested-${codec}.parquet`, encode(nested, nestedRows, codec));

      const back = await query(`SELECT id, tags FROM read_parquet('${path}') ORDER BY id`);

      expect(back).toEqual(nestedRows.map((r) => ({ id: BigInt(r.id), tags: r.tags })));
      expect(await codecsOf(path)).toEqual([name]);
    },
  );

  it.each(CODECS)(
    '%s encodes the same rows to the same bytes (replays rewrite identical files)',
    (codec) => {
      const a = encode(flat, flatRows, codec);
      const b = encode(flat, flatRows, codec);

      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    },
  );

  it.each([
    ['brotli', '.br.parquet'],
    ['lz4_raw', '.lz4raw.parquet'],
  ] as const)(
    "the sink names %s files with parquet-mr's extension, %s, and DuckDB reads them",
    async (codec, extension) => {
      const w = new ParquetSinkWriter(
        sinkConfig({ kind: 'local', url: '' }, { flushSize: 5, codec }),
        new LocalStore(pathToFileURL(join(dir, 'lake')).href),
        new ManualClock(T0),
        { encoder: 'inline' },
      );
      try {
        await w.open([{ topic: 'orders', partition: 0 }]);
        await w.put(orderRecords('orders', 0, 0, 10));
        await w.flushed();
      } finally {
        await w.stop();
      }
      const folder = join(dir, 'lake', 'topics', 'orders', 'partition=0');

      expect(readdirSync(folder).filter((f) => !f.startsWith('.'))).toEqual([
        `orders+0+0000000000${extension}`,
        `orders+0+0000000005${extension}`,
      ]);
      const [n] = await query(`SELECT count(*) AS n FROM read_parquet('${folder}/*${extension}')`);
      expect(n).toEqual({ n: 10n });
      expect(parquetExtension(codec)).toBe(extension);
    },
  );
});

describe('parquet.codec on the encoder thread', () => {
  it('gives the bytes the task thread gives, for every codec and a zstd level', async () => {
    const mapped = toParquetSchema(flat);
    const taken = () => {
      const buffer = new RowBuffer(mapped);
      for (const r of flatRows) buffer.append(r);
      return { columns: buffer.take(), bytes: buffer.estimatedBytes };
    };
    const thread = new FileEncoder('thread');
    const cases: Array<{ codec: ParquetCodec; zstdLevel?: number }> = [
      ...CODECS.map(([codec]) => ({ codec })),
      { codec: 'zstd', zstdLevel: 19 },
    ];
    for (const c of cases) {
      const options = { ...c, kv: [] };
      const t = taken();

      const onThread = await thread.encode(mapped, t.columns, t.bytes, options);

      expect(Buffer.from(onThread)).toEqual(
        Buffer.from(encodeParquet(mapped, taken().columns, options)),
      );
    }
  });
});

describe('parquet.compression.codec.zstd.level', () => {
  it('reaches the compressor: levels 1 and 19 give different files that DuckDB reads alike', async () => {
    const low = write('low.parquet', encode(flat, flatRows, 'zstd', 1));
    const high = write('high.parquet', encode(flat, flatRows, 'zstd', 19));

    const read = (p: string) => query(`SELECT * FROM read_parquet('${p}') ORDER BY id`);

    expect(
      Buffer.from(encode(flat, flatRows, 'zstd', 1)).equals(
        Buffer.from(encode(flat, flatRows, 'zstd', 19)),
      ),
    ).toBe(false);
    expect(await read(low)).toEqual(await read(high));
  });

  it("defaults to 3, parquet-mr's and zstd's default", () => {
    const unset = encode(flat, flatRows, 'zstd');
    const three = encode(flat, flatRows, 'zstd', 3);

    expect(Buffer.from(unset).equals(Buffer.from(three))).toBe(true);
    expect(config({ 'parquet.codec': 'zstd' }).zstdLevel).toBe(3);
    expect(
      config({ 'parquet.codec': 'zstd', 'parquet.compression.codec.zstd.level': '9' }).zstdLevel,
    ).toBe(9);
  });
});

const BASE = { 'flush.size': '10', 'store.url': 'file:///tmp/lake' };

function errors(over: Record<string, string>): Record<string, string[]> {
  const parsed = parseConfig(parquetSinkConfigDefs, { ...BASE, ...over });
  const all = [
    ...parsed.errors,
    ...(parsed.errors.length === 0 ? validateSinkConfig(parsed.values) : []),
  ];
  const byKey: Record<string, string[]> = {};
  for (const e of all) byKey[e.key] = [...(byKey[e.key] ?? []), e.message];
  return byKey;
}

function config(over: Record<string, string>) {
  const parsed = parseConfig(parquetSinkConfigDefs, { ...BASE, ...over });
  expect(parsed.errors).toEqual([]);
  expect(validateSinkConfig(parsed.values)).toEqual([]);
  return toSinkConfig(parsed.values);
}

describe('parquet.codec values', () => {
  it.each(['brotli', 'lz4_raw', 'BROTLI', 'LZ4_RAW'])('%s is accepted', (codec) => {
    expect(config({ 'parquet.codec': codec }).codec).toBe(codec.toLowerCase());
  });

  it.each([
    ['lz4', /not supported: parquet\.codec=lz4: .*deprecated.*use lz4_raw/],
    ['LZ4', /not supported: parquet\.codec=LZ4: .*use lz4_raw/],
    ['lzo', /not supported: parquet\.codec=lzo: .*no LZO compressor; use lz4_raw/],
  ])('%s is refused by name, saying why and what to use', (codec, message) => {
    expect((errors({ 'parquet.codec': codec })['parquet.codec'] ?? []).join(' ')).toMatch(message);
  });

  it.each(['0', '23', '-1'])('a zstd level of %s is refused', (level) => {
    const e = errors({ 'parquet.codec': 'zstd', 'parquet.compression.codec.zstd.level': level });

    expect(e['parquet.compression.codec.zstd.level']?.join(' ')).toMatch(/between 1 and 22/);
  });

  it('a zstd level with another codec is refused rather than ignored', () => {
    const e = errors({ 'parquet.codec': 'snappy', 'parquet.compression.codec.zstd.level': '5' });

    expect(e['parquet.compression.codec.zstd.level']?.join(' ')).toMatch(
      /applies to parquet.codec=zstd only, not snappy/,
    );
  });
});
