/**
 * provide.transaction.metadata through the whole task against real Postgres: BEGIN and
 * END events on `<topic.prefix>.transaction` around each transaction's changes, the
 * `transaction` block of each change, and the counts carried across a restart in the
 * middle of a transaction, as Debezium's Postgres connector does them.
 */
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { JsonConverter } from '../../../src/connect/converters/json-converter.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { envelope, useTaskDatabases } from './support.ts';
import { InMemoryOffsets } from './task-driver.ts';

const cluster = usePostgres();

interface Boundary {
  status: string;
  id: string;
  event_count: number | null;
  data_collections: Array<{ data_collection: string; event_count: number }> | null;
  ts_ms: number;
}

interface Block {
  id: string;
  total_order: number;
  data_collection_order: number;
}

const TX_TOPIC = 'srv.transaction';
const isBoundary = (r: SourceRecord) => r.topic === TX_TOPIC;
const boundary = (r: SourceRecord) => r.value as Boundary;
const block = (r: SourceRecord) => envelope(r).transaction as Block | null;
const isEnd = (r: SourceRecord) => isBoundary(r) && boundary(r).status === 'END';
const withoutHeartbeats = (records: SourceRecord[]) =>
  records.filter((r) => !r.topic.startsWith('__debezium-heartbeat'));

/** `BEGIN`, `END n`, `topic op id total/table-order`, `topic tombstone id`. */
function describeRecords(records: SourceRecord[]): string[] {
  return withoutHeartbeats(records).map((r) => {
    if (isBoundary(r)) {
      const b = boundary(r);
      return b.status === 'BEGIN' ? 'BEGIN' : `END ${b.event_count}`;
    }
    const id = (r.key as { id?: unknown } | null)?.id;
    if (r.value === null) return `${r.topic} tombstone ${id}`;
    const t = block(r);
    return `${r.topic} ${envelope(r).op} ${id} ${t?.total_order}/${t?.data_collection_order}`;
  });
}

describe('Debezium transaction metadata from the task (real Postgres)', () => {
  const { database, run } = useTaskDatabases(cluster, 'txmeta', {
    client: { options: SESSION_OPTIONS },
    config: {
      'publication.autocreate.mode': 'filtered',
      'provide.transaction.metadata': 'true',
    },
  });

  it('wraps a transaction over two tables in BEGIN and END, numbering its events in the transaction and per table', async () => {
    const { db, sql } = await database(
      'CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id int PRIMARY KEY, n int); INSERT INTO a VALUES (0, null)',
    );
    const driver = await run(db);
    const snapshot = await driver.pollUntil('the snapshot', (d) => d.length >= 1);
    await sql.query(`BEGIN; INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (1, 10);
      INSERT INTO a VALUES (2, 'y'); UPDATE b SET n = 11 WHERE id = 1; DELETE FROM a WHERE id = 0;
      COMMIT`);
    // Snapshot events carry no transaction block, and no BEGIN or END comes with them.
    expect(snapshot.map((r) => [r.topic, envelope(r).op, envelope(r).transaction])).toEqual([
      ['srv.public.a', 'r', null],
    ]);
    const all = await driver.pollUntil('the END', (d) => d.some(isEnd));
    const streamed = withoutHeartbeats(all).slice(1);
    expect(describeRecords(streamed)).toEqual([
      'BEGIN',
      'srv.public.a c 1 1/1',
      'srv.public.b c 1 2/1',
      'srv.public.a c 2 3/2',
      'srv.public.b u 1 4/2',
      'srv.public.a d 0 5/3',
      'srv.public.a tombstone 0',
      'END 5',
    ]);
    const begin = streamed[0] as SourceRecord;
    const end = streamed[streamed.length - 1] as SourceRecord;
    const changes = streamed.slice(1, -1).filter((r) => r.value !== null);
    const xid = envelope(changes[0] as SourceRecord).source.txId as number;
    // Ids as Debezium's Postgres connector forms them: "<xid>:<lsn of that record>".
    expect(begin.key).toEqual({ id: `${xid}:${begin.sourceOffset.lsn}` });
    expect(boundary(begin)).toEqual({
      status: 'BEGIN',
      id: `${xid}:${begin.sourceOffset.lsn}`,
      event_count: null,
      data_collections: null,
      ts_ms: envelope(changes[0] as SourceRecord).source.ts_ms,
    });
    for (const c of changes) expect(block(c)?.id).toBe(`${xid}:${envelope(c).source.lsn}`);
    expect(end.key).toEqual({ id: `${xid}:${end.sourceOffset.lsn}` });
    expect(boundary(end)).toEqual({
      status: 'END',
      id: `${xid}:${end.sourceOffset.lsn}`,
      event_count: 5,
      data_collections: [
        { data_collection: 'public.a', event_count: 3 },
        { data_collection: 'public.b', event_count: 2 },
      ],
      ts_ms: envelope(changes[0] as SourceRecord).source.ts_ms,
    });
    // One database transaction, one commit point: BEGIN and END carry its lsn_commit
    // (so exactly-once puts them in its Kafka transaction), BEGIN repeats every change
    // on restart, END is past every change, so the slot waits for END to be stored.
    const lsnCommit = changes[0]?.sourceOffset.lsn_commit;
    for (const r of streamed) expect(r.sourceOffset.lsn_commit).toBe(lsnCommit);
    const procs = streamed.slice(1, -1).map((r) => r.sourceOffset.lsn_proc as number);
    expect(begin.sourceOffset.lsn_proc as number).toBeLessThan(Math.min(...procs));
    expect(end.sourceOffset.lsn_proc as number).toBeGreaterThan(Math.max(...procs));
    expect(streamed.map((r) => r.sourceOffset.transaction_id)).toEqual(
      Array(streamed.length).fill(String(xid)),
    );

    // What a consumer reads, with and without schemas.
    for (const schemasEnable of [true, false]) {
      const json = new JsonConverter();
      json.configure({ 'schemas.enable': schemasEnable }, false);
      const read = (r: SourceRecord, key: boolean) => {
        const text = key
          ? json.fromConnectData(r.topic, r.keySchema ?? null, r.key)
          : json.fromConnectData(r.topic, r.valueSchema ?? null, r.value);
        const parsed = JSON.parse(String(text));
        return schemasEnable ? parsed : { payload: parsed };
      };
      expect(read(end, true).payload).toEqual({ id: boundary(end).id });
      expect(read(begin, false).payload).toEqual(boundary(begin));
      expect(read(end, false).payload).toEqual(boundary(end));
      if (schemasEnable) {
        expect(read(end, true).schema).toMatchObject({
          name: 'io.debezium.connector.common.TransactionMetadataKey',
        });
        expect(read(end, false).schema).toMatchObject({
          name: 'io.debezium.connector.common.TransactionMetadataValue',
          fields: [
            { field: 'status', type: 'string', optional: false },
            { field: 'id', type: 'string', optional: false },
            { field: 'event_count', type: 'int64', optional: true },
            {
              field: 'data_collections',
              type: 'array',
              optional: true,
              items: { type: 'struct', name: 'event.collection' },
            },
            { field: 'ts_ms', type: 'int64', optional: false },
          ],
        });
      }
      expect(read(changes[1] as SourceRecord, false).payload.transaction).toEqual({
        id: `${xid}:${envelope(changes[1] as SourceRecord).source.lsn}`,
        total_order: 2,
        data_collection_order: 1,
      });
    }
  });

  it('counts no skipped operation and no excluded table, and sends no BEGIN or END for a transaction with nothing emitted', async () => {
    const { db, sql } = await database(
      'CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE c (id int PRIMARY KEY)',
    );
    const driver = await run(db, {
      'snapshot.mode': 'no_data',
      'skipped.operations': 'u',
      'table.exclude.list': 'public.c',
      'topic.transaction': 'tx-meta',
    });
    await sql.query(`BEGIN; INSERT INTO a VALUES (1, 'x'); UPDATE a SET v = 'y' WHERE id = 1;
      INSERT INTO c VALUES (1); INSERT INTO a VALUES (2, 'z'); COMMIT`);
    await sql.query("UPDATE a SET v = 'w'");
    await sql.query('INSERT INTO a VALUES (3, null)');
    const onTopic = (r: SourceRecord) => r.topic === 'srv.tx-meta';
    const all = await driver.pollUntil(
      'both ENDs',
      (d) => d.filter((r) => onTopic(r) && boundary(r).status === 'END').length >= 2,
    );
    expect(all.some(isBoundary)).toBe(false);
    expect(
      withoutHeartbeats(all).map((r) =>
        onTopic(r)
          ? `${boundary(r).status} ${boundary(r).event_count} ${JSON.stringify(boundary(r).data_collections)}`
          : `${envelope(r).op} ${(r.key as { id: number }).id} ${block(r)?.total_order}/${block(r)?.data_collection_order}`,
      ),
    ).toEqual([
      'BEGIN null null',
      'c 1 1/1',
      'c 2 2/2',
      'END 2 [{"data_collection":"public.a","event_count":2}]',
      // The update-only transaction: every event skipped, so neither BEGIN nor END.
      'BEGIN null null',
      'c 3 1/1',
      'END 1 [{"data_collection":"public.a","event_count":1}]',
    ]);
  });

  it('continues the numbering after a restart inside a transaction, with one BEGIN and the whole count at END', async () => {
    const { db, sql } = await database(
      'CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); INSERT INTO a SELECT generate_series(1, 3)',
    );
    const offsets = new InMemoryOffsets();
    const first = await run(db, { 'max.batch.size': '4' }, offsets);
    await first.pollUntil('the snapshot', (d) => d.length >= 3);
    await first.flushOffsets();
    const inserts = (from: number, to: number) =>
      Array.from(
        { length: to - from + 1 },
        (_, i) =>
          `INSERT INTO a VALUES (${100 + from + i}); INSERT INTO b VALUES (${100 + from + i});`,
      ).join(' ');
    await sql.query(
      `BEGIN; ${inserts(1, 15)} DELETE FROM a WHERE id <= 3; ${inserts(16, 30)} COMMIT`,
    );
    const isDelete = (r: SourceRecord) =>
      r.value !== null && !isBoundary(r) && envelope(r).op === 'd';
    await first.pollUntil('the deletes', (d) => d.filter(isDelete).length >= 2);
    // The runtime stored the offset of the second delete but not of its tombstone,
    // then the worker died: that delete is owed again, with the same numbers.
    const cut = first.delivered.filter(isDelete)[1] as SourceRecord;
    await first.flushOffsets(cut);
    await first.task.stop();
    const xid = String(envelope(cut).source.txId);
    expect(offsets.stored.values().next().value).toMatchObject({
      transaction_id: xid,
      'transaction_data_collection_order_public.a': 16,
      'transaction_data_collection_order_public.b': 15,
    });

    const second = await run(db, { 'max.batch.size': '4' }, offsets);
    await second.pollUntil('the END', (d) => d.some(isEnd));
    const before = first.delivered.slice(3, first.delivered.indexOf(cut));
    const resent = withoutHeartbeats(second.delivered);
    expect(resent.some((r) => isBoundary(r) && boundary(r).status === 'BEGIN')).toBe(false);
    expect(block(resent[0] as SourceRecord)).toEqual(block(cut));
    const stream = [...withoutHeartbeats(before), ...resent];
    expect(stream.filter((r) => isBoundary(r)).map((r) => boundary(r).status)).toEqual([
      'BEGIN',
      'END',
    ]);
    const events = stream.filter((r) => !isBoundary(r) && r.value !== null);
    expect(events.map((r) => block(r)?.total_order)).toEqual(
      Array.from({ length: 63 }, (_, i) => i + 1),
    );
    for (const table of ['a', 'b']) {
      const ofTable = events.filter((r) => envelope(r).source.table === table);
      expect(ofTable.map((r) => block(r)?.data_collection_order)).toEqual(
        Array.from({ length: table === 'a' ? 33 : 30 }, (_, i) => i + 1),
      );
    }
    const end = stream[stream.length - 1] as SourceRecord;
    expect(boundary(end)).toMatchObject({
      status: 'END',
      event_count: 63,
      data_collections: [
        { data_collection: 'public.a', event_count: 33 },
        { data_collection: 'public.b', event_count: 30 },
      ],
    });
  });
});
