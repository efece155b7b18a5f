/**
 * Logical decoding messages (pg_logical_emit_message) through the whole task against
 * real Postgres, as Debezium's Postgres connector sends them: records on
 * `<topic.prefix>.message`, transactional ones inside their transaction, the prefix
 * filters, binary.handling.mode on the content, transaction metadata, and a
 * non-transactional message sent once across a restart.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseConfig, type SourceRecord } from '../../../src/connect/api/index.ts';
import { JsonConverter } from '../../../src/connect/converters/json-converter.ts';
import { usePostgres } from '../../../test/helpers/postgres.ts';
import { postgresCdcConfigDefs, validateCombinations } from '../src/connector-config.ts';
import { messagePrefixProblem } from '../src/logical-decoding-message.ts';
import { parseLsn } from '../src/lsn.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import { envelope, useTaskDatabases, waitFor } from './support.ts';
import { InMemoryOffsets } from './task-driver.ts';

const cluster = usePostgres();

interface MessageValue {
  op: string;
  ts_ms: number;
  source: Record<string, unknown>;
  transaction: { id: string; total_order: number; data_collection_order: number } | null;
  message: { prefix: string; content: unknown };
}

const TOPIC = 'srv.message';
const isMessage = (r: SourceRecord) => r.topic === TOPIC;
const value = (r: SourceRecord) => r.value as MessageValue;
const withoutHeartbeats = (records: SourceRecord[]) =>
  records.filter((r) => !r.topic.startsWith('__debezium-heartbeat'));

/** `message <prefix> <content as text>` or `<topic> <op> <id>`, heartbeats left out. */
function describeRecords(records: SourceRecord[]): string[] {
  return withoutHeartbeats(records).map((r) => {
    if (isMessage(r)) {
      const { prefix, content } = value(r).message;
      return `message ${prefix} ${Buffer.isBuffer(content) ? content.toString() : content}`;
    }
    if (r.topic === 'srv.transaction') {
      const v = r.value as { status: string; event_count: number | null };
      return v.status === 'BEGIN' ? 'BEGIN' : `END ${v.event_count}`;
    }
    return `${r.topic} ${envelope(r).op} ${(r.key as { id: number }).id}`;
  });
}

describe('Debezium logical decoding messages from the task (real Postgres)', () => {
  // no_data streams from the slot the start made: what comes after run() is captured.
  const { database, run } = useTaskDatabases(cluster, 'ldmsg', {
    client: { options: SESSION_OPTIONS },
    config: { 'publication.autocreate.mode': 'filtered', 'snapshot.mode': 'no_data' },
  });

  async function confirmedLsn(sql: pg.Client, slot: string): Promise<number> {
    const r = await sql.query(
      'SELECT confirmed_flush_lsn::text AS l FROM pg_replication_slots WHERE slot_name = $1',
      [slot],
    );
    return parseLsn(r.rows[0].l);
  }

  it('sends transactional and non-transactional messages to <topic.prefix>.message in WAL order, each in its place', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db);
    await sql.query("SELECT pg_logical_emit_message(false, 'foo', 'bar')");
    await sql.query(`BEGIN; INSERT INTO t VALUES (1);
      SELECT pg_logical_emit_message(true, 'txn_foo', 'txn_bar'); INSERT INTO t VALUES (2); COMMIT`);
    // A non-transactional message goes out when written; the transaction around it at
    // its commit, after it.
    await sql.query(`BEGIN; INSERT INTO t VALUES (3);
      SELECT pg_logical_emit_message(false, 'early', 'out of band'); COMMIT`);
    const all = await driver.pollUntil('the last insert', (d) =>
      describeRecords(d).includes('srv.public.t c 3'),
    );
    expect(describeRecords(all)).toEqual([
      'message foo bar',
      'srv.public.t c 1',
      'message txn_foo txn_bar',
      'srv.public.t c 2',
      'message early out of band',
      'srv.public.t c 3',
    ]);
    const records = withoutHeartbeats(all);
    const [plain, , txn, second] = records as [
      SourceRecord,
      SourceRecord,
      SourceRecord,
      SourceRecord,
    ];
    const txId = envelope(second).source.txId as number;
    expect(plain.key).toEqual({ prefix: 'foo' });
    expect(value(plain)).toEqual({
      op: 'm',
      ts_ms: 1_700_000_000_000,
      source: {
        version: expect.any(String),
        connector: 'postgresql',
        name: 'srv',
        // No commit time: the processing time, as Debezium's source block has it.
        ts_ms: 1_700_000_000_000,
        snapshot: 'false',
        db,
        sequence: `["${plain.sourceOffset.lsn}","${plain.sourceOffset.lsn}"]`,
        schema: '',
        table: '',
        txId: null,
        lsn: plain.sourceOffset.lsn,
        xmin: null,
      },
      transaction: null,
      message: { prefix: 'foo', content: Buffer.from('bar') },
    });
    expect(value(txn)).toMatchObject({
      op: 'm',
      source: { txId, ts_ms: envelope(second).source.ts_ms, schema: '', table: '' },
      transaction: null,
      message: { prefix: 'txn_foo', content: Buffer.from('txn_bar') },
    });
    // A transactional message is one of its transaction's records; the others stand alone.
    // Its place in the stream is just before its LSN, where the next change starts.
    expect(txn.sourceOffset).toMatchObject({
      lsn: (value(txn).source.lsn as number) - 1,
      lsn_proc: (value(txn).source.lsn as number) - 1,
      lsn_commit: second.sourceOffset.lsn_commit,
      txId,
      messageType: 'MESSAGE',
    });
    expect(plain.sourceOffset).toMatchObject({
      lsn_commit: (plain.sourceOffset.lsn as number) - 1,
      lsn_proc: plain.sourceOffset.lsn,
      txId: null,
      messageType: 'MESSAGE',
    });

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
      expect(read(txn, true).payload).toEqual({ prefix: 'txn_foo' });
      expect(read(txn, false).payload.message).toEqual({
        prefix: 'txn_foo',
        content: Buffer.from('txn_bar').toString('base64'),
      });
      if (schemasEnable) {
        expect(read(txn, true).schema).toEqual({
          type: 'struct',
          name: 'io.debezium.connector.postgresql.MessageKey',
          version: 1,
          optional: false,
          fields: [{ field: 'prefix', type: 'string', optional: true }],
        });
        const schema = read(txn, false).schema;
        expect(schema).toMatchObject({
          name: 'io.debezium.connector.postgresql.MessageValue',
          version: 1,
          fields: [
            { field: 'op', type: 'string', optional: false },
            { field: 'ts_ms', type: 'int64', optional: true },
            { field: 'source', name: 'io.debezium.connector.postgresql.Source' },
            { field: 'transaction', name: 'event.block', optional: true },
            {
              field: 'message',
              name: 'io.debezium.connector.postgresql.Message',
              optional: false,
              fields: [
                { field: 'prefix', type: 'string', optional: true },
                { field: 'content', type: 'bytes', optional: true },
              ],
            },
          ],
        });
      }
    }
  });

  it.each([
    ['base64', '+/9h', 'string'],
    ['base64-url-safe', '-_9h', 'string'],
    ['hex', 'fbff61', 'string'],
  ])('sends the content per binary.handling.mode=%s', async (mode, expected, type) => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, { 'binary.handling.mode': mode });
    await sql.query("SELECT pg_logical_emit_message(false, 'bin', '\\xfbff61'::bytea)");
    const [record] = await driver.pollUntil('the message', (d) => d.some(isMessage));
    expect(value(record as SourceRecord).message.content).toBe(expected);
    const block = (record as SourceRecord).valueSchema?.fields?.find((f) => f.name === 'message');
    expect(block?.schema.fields?.find((f) => f.name === 'content')?.schema).toMatchObject({
      type,
      optional: true,
    });
  });

  it('sends only the prefixes message.prefix.include.list matches, whole and in any case', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, {
      'message.prefix.include.list': 'included_prefix, prefix:included, ano.*er_included',
    });
    for (const prefix of [
      'included_prefix',
      'excluded_prefix',
      'prefix:excluded',
      'PREFIX:INCLUDED',
      'another_included',
      'included_prefix_not',
    ])
      await sql.query("SELECT pg_logical_emit_message(false, $1, 'content')", [prefix]);
    await sql.query('INSERT INTO t VALUES (1)');
    const all = await driver.pollUntil('the insert', (d) =>
      describeRecords(d).includes('srv.public.t c 1'),
    );
    expect(describeRecords(all)).toEqual([
      'message included_prefix content',
      'message PREFIX:INCLUDED content',
      'message another_included content',
      'srv.public.t c 1',
    ]);
  });

  it('sends none of the prefixes message.prefix.exclude.list matches, and moves the slot past them', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, {
      'message.prefix.exclude.list': 'excluded_prefix, prefix:excluded',
    });
    await sql.query("SELECT pg_logical_emit_message(false, 'included_prefix', 'content')");
    await sql.query("SELECT pg_logical_emit_message(false, 'excluded_prefix', 'content')");
    await sql.query(
      "BEGIN; SELECT pg_logical_emit_message(true, 'prefix:excluded', 'content'); INSERT INTO t VALUES (1); COMMIT",
    );
    await sql.query("SELECT pg_logical_emit_message(false, 'prefix:included', 'content')");
    const all = await driver.pollUntil('the last message', (d) =>
      describeRecords(d).includes('message prefix:included content'),
    );
    expect(describeRecords(all)).toEqual([
      'message included_prefix content',
      'srv.public.t c 1',
      'message prefix:included content',
    ]);
    const last = withoutHeartbeats(all).at(-1) as SourceRecord;
    await driver.flushOffsets();
    await waitFor('the slot confirmed past the last message', async () =>
      (await confirmedLsn(sql, db)) >= (last.sourceOffset.lsn as number) ? true : undefined,
    );
  });

  it('refuses message.prefix.include.list and message.prefix.exclude.list together, and a prefix that is no regular expression', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      'database.hostname': 'db.example',
      'database.user': 'u',
      'database.dbname': 'inventory',
      'topic.prefix': 'one',
      'message.prefix.include.list': 'a.*',
      'message.prefix.exclude.list': 'b.*,c(',
    });
    expect(parsed.errors).toEqual([]);
    expect(validateCombinations(parsed.values)).toEqual([
      {
        key: 'message.prefix.exclude.list',
        value: ['b.*', 'c('],
        message:
          '"message.prefix.include.list" is already set; use either the include or the exclude list, not both',
      },
      {
        key: 'message.prefix.exclude.list',
        value: 'c(',
        message: '"c(" is not a valid regular expression',
      },
    ]);
  });

  it('refuses the prefix lists on a Postgres older than 14, whose pgoutput sends no messages, naming the keys', () => {
    const lists = { include: ['audit.*'], exclude: [] };
    expect(messagePrefixProblem(130012, lists)).toMatch(
      /^message\.prefix\.include\.list cannot apply: this Postgres \(server_version_num 130012\) is older than 14/,
    );
    expect(messagePrefixProblem(140000, lists)).toBeNull();
    expect(messagePrefixProblem(130012, { include: [], exclude: [] })).toBeNull();
  });

  it('counts a transactional message in its transaction as LOGICAL_DECODING_MESSAGE, and a non-transactional one in none', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const driver = await run(db, { 'provide.transaction.metadata': 'true' });
    await sql.query(
      "BEGIN; INSERT INTO t VALUES (1); SELECT pg_logical_emit_message(true, 'audit', 'who'); COMMIT",
    );
    await sql.query("SELECT pg_logical_emit_message(true, 'alone', 'in a transaction of its own')");
    await sql.query("SELECT pg_logical_emit_message(false, 'plain', 'no transaction')");
    const all = await driver.pollUntil('the plain message', (d) =>
      describeRecords(d).includes('message plain no transaction'),
    );
    expect(describeRecords(all)).toEqual([
      'BEGIN',
      'srv.public.t c 1',
      'message audit who',
      'END 2',
      'BEGIN',
      'message alone in a transaction of its own',
      'END 1',
      'message plain no transaction',
    ]);
    const records = withoutHeartbeats(all);
    const audit = records[2] as SourceRecord;
    const xid = value(audit).source.txId as number;
    expect(value(audit).transaction).toEqual({
      id: `${xid}:${value(audit).source.lsn}`,
      total_order: 2,
      data_collection_order: 1,
    });
    expect((records[3] as SourceRecord).value).toMatchObject({
      status: 'END',
      event_count: 2,
      data_collections: [
        { data_collection: 'public.t', event_count: 1 },
        { data_collection: 'LOGICAL_DECODING_MESSAGE', event_count: 1 },
      ],
    });
    expect(value(records[5] as SourceRecord).transaction).toMatchObject({
      total_order: 1,
      data_collection_order: 1,
    });
    expect(value(records[7] as SourceRecord).transaction).toBeNull();
    expect((records[7] as SourceRecord).sourceOffset.transaction_id).toBeUndefined();
  });

  it('sends a non-transactional message once across a reconnect that Postgres sends it again on, and across a restart from its offset', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await sql.query("SELECT pg_logical_emit_message(false, 'once', 'first')");
    await sql.query('INSERT INTO t VALUES (1)');
    await sql.query("SELECT pg_logical_emit_message(false, 'once', 'second')");
    await first.pollUntil('the second message', (d) =>
      describeRecords(d).includes('message once second'),
    );
    // Only the first message is confirmed: the new connection gets the insert and the
    // second message again from Postgres, and must not hand them on twice.
    const firstMessage = withoutHeartbeats(first.delivered)[0] as SourceRecord;
    await first.flushOffsets(firstMessage);
    await waitFor('the first message confirmed', async () =>
      (await confirmedLsn(sql, db)) >= (firstMessage.sourceOffset.lsn as number) ? true : undefined,
    );
    await sql.query(
      'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1',
      [db],
    );
    await sql.query("SELECT pg_logical_emit_message(false, 'once', 'third')");
    await first.pollUntil('the third message', (d) =>
      describeRecords(d).includes('message once third'),
    );
    expect(describeRecords(first.delivered)).toEqual([
      'message once first',
      'srv.public.t c 1',
      'message once second',
      'message once third',
    ]);
    // The worker dies with the third message's offset stored, not confirmed.
    await first.flushOffsets();
    await first.task.stop();
    await sql.query("SELECT pg_logical_emit_message(false, 'once', 'while down')");
    await sql.query('INSERT INTO t VALUES (2)');

    const second = await run(db, {}, offsets);
    const resent = await second.pollUntil('the insert made while down', (d) =>
      describeRecords(d).includes('srv.public.t c 2'),
    );
    expect(describeRecords(resent)).toEqual(['message once while down', 'srv.public.t c 2']);
  });

  it('resumes from a non-transactional message without skipping the transaction whose Commit follows it in the WAL', async () => {
    const { db, sql } = await database('CREATE TABLE t (id int PRIMARY KEY)');
    const offsets = new InMemoryOffsets();
    const first = await run(db, {}, offsets);
    await sql.query(`BEGIN; INSERT INTO t VALUES (1);
      SELECT pg_logical_emit_message(false, 'early', 'x'); COMMIT`);
    const [message, insert] = withoutHeartbeats(
      await first.pollUntil('the insert', (d) => describeRecords(d).includes('srv.public.t c 1')),
    ) as [SourceRecord, SourceRecord];
    // The message's LSN is where its record ends, and the Commit's record starts there.
    expect(insert.sourceOffset.lsn_commit).toBe(message.sourceOffset.lsn);
    // The offset flush stored the message's offset but not the insert's, then the worker died.
    await first.flushOffsets(message);
    await first.task.stop();

    const second = await run(db, {}, offsets);
    const resent = await second.pollUntil('the insert again', (d) =>
      describeRecords(d).includes('srv.public.t c 1'),
    );
    expect(describeRecords(resent)).toEqual(['srv.public.t c 1']);
  });
});
