/**
 * column.propagate.source.type and datatype.propagate.source.type against real
 * Postgres, snapshot and streaming. The expected parameters are those Debezium's own
 * tests assert for the same columns (RecordsSnapshotProducerIT's domain cases and
 * AbstractRecordsProducerTest's ...WithSourceColumnTypeInfo): VARCHAR/2/0 for
 * varchar(2), NUMERIC/3/2 for numeric(3,2), MONEY/2147483647/0, a domain by its own
 * name sized by its base type (FLOAT83/8/3, MONEY2/2147483647/0, VARBIT2/3/0).
 */
import { describe, expect, it } from 'vitest';
import type { Schema, SourceRecord } from '../../../src/connect/api/index.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { useTaskDatabases } from './support.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

const cluster = usePostgres();

const DDL = `CREATE DOMAIN float83 AS numeric(8,3) DEFAULT 0.0;
  CREATE DOMAIN money2 AS money DEFAULT 0.0;
  CREATE DOMAIN varbit2 AS varbit(3);
  CREATE TABLE alias_table (pk int PRIMARY KEY, vc varchar(2), d numeric(3,2), salary money,
    salary2 money2, a numeric(8,3), area float83, value varbit2, t text, i int4);
  INSERT INTO alias_table VALUES (1, 'ab', 1.1, 7.25, 8.25, 12345.123, 12345.123, B'101', 'x', 5)`;

const changes = (records: SourceRecord[]) => records.filter((r) => r.value !== null);
const param = (name: string, length: string, scale: string, column: string) => ({
  '__debezium.source.column.type': name,
  '__debezium.source.column.length': length,
  '__debezium.source.column.scale': scale,
  '__debezium.source.column.name': column,
});

describe('__debezium.source.column.* schema parameters (real Postgres)', () => {
  const { cleanups, database, config } = useTaskDatabases(cluster, 'srctype', {
    config: { 'publication.autocreate.mode': 'filtered' },
  });

  async function schemas(overrides: Record<string, string>) {
    const { db, sql } = await database(DDL);
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    const driver = new TaskDriver(task, new InMemoryOffsets());
    await driver.start(config(db, { 'decimal.handling.mode': 'double', ...overrides }));
    await driver.pollUntil('the snapshot', (d) => changes(d).length >= 1);
    await sql.query("INSERT INTO alias_table VALUES (2, 'cd', 2.2, 1, 2, 3, 4, B'11', 'y', 6)");
    const records = changes(await driver.pollUntil('the insert', (d) => changes(d).length >= 2));
    return records.map((r) => {
      const after = r.valueSchema?.fields?.find((f) => f.name === 'after')?.schema as Schema;
      return Object.fromEntries(after.fields?.map((f) => [f.name, f.schema.parameters]) ?? []);
    });
  }

  it('adds them to the columns column.propagate.source.type names, snapshotted and streamed', async () => {
    const [snapshot, streamed] = await schemas({
      'column.propagate.source.type': 'public\\.alias_table\\.(vc|d|salary.*|a|area|value)',
    });
    const expected = {
      pk: undefined,
      vc: param('VARCHAR', '2', '0', 'vc'),
      d: param('NUMERIC', '3', '2', 'd'),
      salary: param('MONEY', '2147483647', '0', 'salary'),
      salary2: param('MONEY2', '2147483647', '0', 'salary2'),
      a: param('NUMERIC', '8', '3', 'a'),
      area: param('FLOAT83', '8', '3', 'area'),
      value: { length: '3', ...param('VARBIT2', '3', '0', 'value') },
      t: undefined,
      i: undefined,
    };
    expect(snapshot).toEqual(expected);
    expect(streamed).toEqual(expected);
  });

  it('adds them to the columns whose type datatype.propagate.source.type names, case-insensitively', async () => {
    const [snapshot, streamed] = await schemas({
      'datatype.propagate.source.type': '.+\\.VARCHAR,public\\.alias_table\\.int4,.+\\.text',
    });
    for (const s of [snapshot, streamed]) {
      expect(s.vc).toEqual(param('VARCHAR', '2', '0', 'vc'));
      expect(s.i).toEqual(param('INT4', '10', '0', 'i'));
      expect(s.t).toEqual(param('TEXT', '2147483647', '0', 't'));
      expect(s.d).toBeUndefined();
    }
  });
});
