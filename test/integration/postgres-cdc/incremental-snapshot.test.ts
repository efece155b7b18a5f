/**
 * An incremental snapshot (execute-snapshot through the signal table) of a 200k-row
 * table while 20k updates and deletes stream, through `connect standalone` and the
 * embedded broker, with the worker killed (SIGKILL) in the middle of the snapshot and
 * restarted on the same broker data and offsets file. Once the cleaner has compacted
 * the topic, it holds exactly the table: one record per live row, with its current
 * value; no read older than a streamed change survived, no deleted row came back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  endOffset,
  readTopicWithKcat,
  startCdcWorker,
  useAdmin,
  useDatabase,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();
const TOPIC = 'PostgreSQL_server.public.t';
const ROWS = 200_000;
const COLLECTIONS = 'incremental_snapshot_collections';
/** A row written after the snapshot, only to roll the topic's segments. */
const MARKER = 1_000_000;

/** 400 transactions of 40 updates and 10 deletes (20k changes), paced so they span the snapshot. */
const WRITER = `
DO $$
BEGIN
  FOR tx IN 0..399 LOOP
    UPDATE t SET v = v + 1
      WHERE id IN (SELECT 1 + ((tx * 50 + g) * 7919) % ${ROWS} FROM generate_series(0, 39) g);
    DELETE FROM t
      WHERE id IN (SELECT 1 + ((tx * 50 + g) * 104729) % ${ROWS} FROM generate_series(40, 49) g);
    COMMIT;
    PERFORM pg_sleep(0.02);
  END LOOP;
END $$`;

function storedOffset(file: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const entries = JSON.parse(text).offsets as Array<[string, string]>;
  const value = entries.find(([k]) => k.includes('PostgreSQL_server'))?.[1];
  return value ? JSON.parse(value) : null;
}

describe('incremental snapshot of a large table with a worker crash in the middle', () => {
  it('ends with the compacted topic exactly the table', { timeout: 600_000 }, async () => {
    const dir = useTmpDir();
    const { db, sql } = await useDatabase(
      cluster(),
      'incsnap',
      `CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));
       CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL);
       INSERT INTO t SELECT g, 0 FROM generate_series(1, ${ROWS}) g;`,
    );
    const writer = await cluster().client(db);
    writer.on('error', () => undefined);
    const connector = cdcConnectorConfig(cluster(), db, {
      'table.include.list': 'public.t',
      'snapshot.mode': 'no_data',
      'signal.data.collection': 'public.debezium_signal',
      'incremental.snapshot.chunk.size': '2048',
      // Rolled segments are what the cleaner compacts; tombstones go at once.
      'topic.creation.default.segment.ms': '2000',
      'topic.creation.default.delete.retention.ms': '0',
      'topic.creation.default.min.cleanable.dirty.ratio': '0.01',
      'topic.creation.default.max.compaction.lag.ms': '1000',
    });
    const options = {
      worker: {
        'key.converter.schemas.enable': 'false',
        'value.converter.schemas.enable': 'false',
        'offset.flush.interval.ms': '200',
      },
    };
    const offsetsFile = join(dir, 'connect.offsets');
    try {
      const first = await startCdcWorker(dir, 'inc', connector, options);
      await waitFor('the slot', async () =>
        (await sql.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [db]))
          .rowCount === 1
          ? true
          : undefined,
      );
      await sql.query(
        `INSERT INTO debezium_signal VALUES ('ad-hoc', 'execute-snapshot', '{"data-collections": ["public.t"]}')`,
      );
      const writing = writer.query(WRITER);
      const admin = await useAdmin(first.bootstrap);
      // Kill once a fifth of the rows is out and an offset in the middle of the snapshot is stored.
      await waitFor(
        'a fifth of the table in the topic, with the snapshot state stored',
        async () => {
          const stored = storedOffset(offsetsFile);
          const out = (await endOffset(admin, TOPIC)) ?? 0;
          return out >= ROWS / 5 && typeof stored?.[COLLECTIONS] === 'string' ? true : undefined;
        },
        180_000,
      );
      await admin.disconnect();
      first.process.signal('SIGKILL');
      await first.process.exited;

      const second = await startCdcWorker(dir, 'inc', connector, options);
      await writing;
      await waitFor(
        'the snapshot to end (no snapshot state in the stored offset)',
        async () => {
          const stored = storedOffset(offsetsFile);
          return stored && !(COLLECTIONS in stored) ? true : undefined;
        },
        300_000,
      );
      // The cleaner compacts rolled segments only, and the stream may still be
      // delivering the writer's last changes: a marker row written every 2.5 s (longer
      // than segment.ms) rolls the segment that holds everything before it, and
      // max.compaction.lag.ms has the cleaner take the small dirty tail that is left.
      const table = new Map<number, number>(
        (await sql.query('SELECT id, v FROM t')).rows.map((r) => [Number(r.id), Number(r.v)]),
      );
      let marker = 0;
      let markedAt = 0;
      const records = await waitFor(
        'the cleaner to leave one record per live row',
        async () => {
          const read = (await readTopicWithKcat(second.bootstrap, TOPIC)).filter(
            (r) => JSON.parse(r.key!).id !== MARKER,
          );
          if (read.length === table.size) return read;
          if (Date.now() - markedAt > 2500) {
            marker++;
            markedAt = Date.now();
            await sql.query(
              `INSERT INTO t VALUES (${MARKER}, $1) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v`,
              [marker],
            );
          }
          return undefined;
        },
        240_000,
      );
      const topic = new Map<number, number>(
        records.map((r) => [JSON.parse(r.key!).id as number, JSON.parse(r.value!).after.v]),
      );

      expect(topic.size).toBe(table.size);
      expect(topic).toEqual(table);
    } finally {
      await writer.end().catch(() => undefined);
    }
  });
});
