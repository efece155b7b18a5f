/**
 * Postgres -> CDC source -> ExtractNewRecordState -> Parquet sink, in one standalone
 * worker: the lake table DuckDB reads has real types for what Debezium sends as
 * strings and structs (timestamptz, uuid, jsonb, numeric without a scale), and the
 * values equal the database's.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { query } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  cdcPluginPath,
  rest,
  startCdcWorker,
  useDatabase,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();
const parquetPluginPath = fileURLToPath(
  new URL('../../../connectors/parquet-sink', import.meta.url),
);

const DDL = `CREATE TABLE payments (
    id int PRIMARY KEY,
    paid_at timestamptz NOT NULL,
    ref uuid NOT NULL,
    attrs jsonb,
    ratio numeric,
    amount numeric(10, 2) NOT NULL);
  INSERT INTO payments VALUES
    (1, '2024-05-01 12:15:30.123456+02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"tier": "gold"}', 1.5, 10.25),
    (2, '1999-12-31 23:59:59+00', '00000000-0000-0000-0000-000000000001', NULL, -42, 0.10)`;

describe('a CDC lake table in DuckDB', () => {
  it('has TIMESTAMP WITH TIME ZONE, UUID, JSON and DECIMAL columns with the database values', async () => {
    const { db } = await useDatabase(cluster(), 'laketypes', DDL);
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const worker = await startCdcWorker(
      dir,
      'pg',
      cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.payments' }),
      { worker: { 'plugin.path': `${cdcPluginPath},${parquetPluginPath}` } },
    );
    const sink = await rest(worker, 'PUT', '/connectors/lake/config', {
      name: 'lake',
      'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
      topics: 'PostgreSQL_server.public.payments',
      'store.url': `file://${lake}`,
      'flush.size': '2',
      transforms: 'unwrap',
      'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
    });
    expect(sink.status).toBe(201);

    const folder = join(lake, 'topics', 'PostgreSQL_server.public.payments', 'partition=0');
    await waitFor(
      'the first Parquet file',
      () => {
        try {
          return readdirSync(folder).some((f) => f.endsWith('.parquet')) ? true : undefined;
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    const files = `read_parquet('${folder}/*.parquet')`;

    const described = await query(
      `DESCRIBE SELECT paid_at, ref, attrs, ratio, amount FROM ${files}`,
    );
    expect(Object.fromEntries(described.map((r) => [r.column_name, r.column_type]))).toEqual({
      paid_at: 'TIMESTAMP WITH TIME ZONE',
      ref: 'UUID',
      attrs: 'JSON',
      ratio: 'DECIMAL(38,10)',
      amount: 'DECIMAL(10,2)',
    });
    expect(
      await query(`SELECT id, epoch_us(paid_at)::VARCHAR AS paid_at, ref::VARCHAR AS ref,
                          attrs::VARCHAR AS attrs, ratio::VARCHAR AS ratio, amount::VARCHAR AS amount
                     FROM ${files} ORDER BY id`),
    ).toEqual([
      {
        id: 1,
        paid_at: String(Date.UTC(2024, 4, 1, 10, 15, 30) * 1000 + 123456),
        ref: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        attrs: '{"tier": "gold"}',
        ratio: '1.5000000000',
        amount: '10.25',
      },
      {
        id: 2,
        paid_at: String(Date.UTC(1999, 11, 31, 23, 59, 59) * 1000),
        ref: '00000000-0000-0000-0000-000000000001',
        attrs: null,
        ratio: '-42.0000000000',
        amount: '0.10',
      },
    ]);
  });
});
