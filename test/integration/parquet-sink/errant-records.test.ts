/**
 * Through `connect standalone`: with errors.tolerance=all and a dead letter queue,
 * records the Parquet sink cannot write (here a field the FieldPartitioner cannot
 * partition by, and a schema Parquet has no form for) go to the DLQ through the
 * errant record reporter, with the runtime's context headers (stage TASK_PUT), while
 * the other records land in files, the offsets are committed past both, and the task
 * keeps RUNNING.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { query } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { readRecords } from '../../helpers/read-records.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  connectorStatus,
  localObjects,
  produce,
  startPipeline,
  waitForCommitted,
} from './sink-pipeline.ts';
import { clickMessage, range } from './wire-records.ts';

/** Click 13 with `country` as a struct: FieldPartitioner(country) needs a primitive. */
function structCountry(i: number) {
  const m = clickMessage(i);
  const schema = structuredClone(m.value.schema) as { fields: Array<Record<string, unknown>> };
  const country = schema.fields.find((f) => f.field === 'country') as Record<string, unknown>;
  Object.assign(country, {
    type: 'struct',
    fields: [{ field: 'code', type: 'string', optional: false }],
  });
  return { ...m, value: { schema, payload: { ...m.value.payload, country: { code: 'PL' } } } };
}

/** Click 40 with an extra struct field of no fields: Parquet has no group without one. */
function emptyStruct(i: number) {
  const m = clickMessage(i);
  const schema = structuredClone(m.value.schema) as { fields: Array<Record<string, unknown>> };
  schema.fields.push({ field: 'meta', type: 'struct', fields: [], optional: true });
  return { ...m, value: { schema, payload: { ...m.value.payload, meta: null } } };
}

const BAD = [13, 40];
const messages = range(0, 62).map((i) =>
  i === 13 ? structCountry(i) : i === 40 ? emptyStruct(i) : clickMessage(i),
);

describe('Parquet sink errant records through connect standalone', () => {
  it('with errors.tolerance=all sends records it cannot write to the DLQ and writes the rest', async () => {
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const name = 'tolerant-lake';
    const p = await startPipeline({
      dir,
      connector: {
        name,
        config: {
          'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
          topics: 'clicks',
          'store.url': `file://${lake}`,
          'flush.size': '20',
          'partitioner.class': 'io.confluent.connect.storage.partitioner.FieldPartitioner',
          'partition.field.name': 'country',
          'errors.tolerance': 'all',
          'errors.deadletterqueue.topic.name': 'clicks-dlq',
          'errors.deadletterqueue.topic.replication.factor': '1',
          'errors.deadletterqueue.context.headers.enable': 'true',
        },
      },
    });
    await produce(p.bootstrap, 'clicks', messages);
    // 60 writable records make three groups of flush.size=20 rows; the last ends at
    // offset 61, so everything is committed, the two errant records included.
    await waitForCommitted(p, name, 'clicks', [62]);

    const dead = (await readRecords(p.bootstrap, 'clicks-dlq', BAD.length)).map((r) => ({
      offset: (JSON.parse(r.value).payload as { n: number }).n,
      headers: r.headers,
    }));
    expect(dead.map((d) => d.offset).sort((a, b) => a - b)).toEqual(BAD);
    for (const d of dead) {
      expect(d.headers).toMatchObject({
        '__connect.errors.topic': 'clicks',
        '__connect.errors.partition': '0',
        '__connect.errors.offset': String(d.offset),
        '__connect.errors.connector.name': name,
        '__connect.errors.stage': 'TASK_PUT',
        '__connect.errors.exception.class.name': 'DataException',
      });
    }
    const byOffset = new Map(dead.map((d) => [d.offset, d.headers]));
    expect(byOffset.get(13)?.['__connect.errors.exception.message']).toMatch(
      /field 'country' of clicks-0@13 is not a primitive/,
    );
    expect(byOffset.get(40)?.['__connect.errors.exception.message']).toMatch(
      /clicks-0@40 cannot be written: struct 'meta' has no fields/,
    );

    const [agg] = await query(
      `SELECT count(*) AS n, sum(n) AS total, count(DISTINCT country) AS countries
       FROM read_parquet('${lake}/topics/**/*.parquet', hive_partitioning = true)`,
    );
    const written = range(0, 62).filter((i) => !BAD.includes(i));
    expect(agg).toEqual({
      n: BigInt(written.length),
      total: BigInt(written.reduce((a, b) => a + b)),
      countries: 3n,
    });
    // Groups start at offsets 0, 21 (0-20 holds 20 rows without 13) and 42: a file per
    // country in each, named by its first offset (countries take turns).
    const starts = [...localObjects(lake).keys()].map((k) =>
      Number(k.split('+').pop()?.slice(0, 10)),
    );
    expect(starts.sort((a, b) => a - b)).toEqual([0, 1, 2, 21, 22, 23, 42, 43, 44]);
    const status = await connectorStatus(p.restUrl, name);
    expect(status.tasks[0]?.state).toBe('RUNNING');
  });
});
