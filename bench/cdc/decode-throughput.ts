/**
 * CDC decoding throughput: how fast change events come out of a real Postgres slot,
 * next to pg_recvlogical (Postgres' own client, decoding the same changes with pgoutput
 * to /dev/null: the limit this process can at best reach), for
 *   one transaction of N small rows   (BENCH_ROWS, default 1,000,000)
 *   T transactions of 10 rows         (BENCH_TXNS, default 100,000)
 *   T transactions of 10 typed rows   (BENCH_TYPED_TXNS, default 20,000): a 20-column
 *                                     table of the common types (integers, numeric,
 *                                     floats, boolean, text, varchar, char, date, time,
 *                                     timestamp, timestamptz, interval, uuid, jsonb,
 *                                     bytea, inet, int4[])
 * Each consumer reads its own slot created before the workload, so all of them decode
 * the same WAL. Our figures: "stream" = frames decoded by pgoutput-decoder only,
 * "events" = full Debezium records (type mapping, key, envelope). Also the pure
 * parse rate of our decoder next to pg-logical-replication's parser on the same frames,
 * and "build" = the same frames decoded and turned into Debezium records in process,
 * with no I/O: the CPU cost of the event path alone (type mapping, key, envelope).
 * Run: npx tsx bench/cdc/decode-throughput.ts      Prints `name: value unit` lines.
 */
import pg from 'pg';
import { PgoutputPlugin } from 'pg-logical-replication';
import { ChangeEventSource } from '../../connectors/postgres-cdc/src/change-event-source.ts';
import { formatLsn, type Lsn, parseLsn } from '../../connectors/postgres-cdc/src/lsn.ts';
import { decodePgoutput } from '../../connectors/postgres-cdc/src/pgoutput-decoder.ts';
import { ensurePublication } from '../../connectors/postgres-cdc/src/publication.ts';
import { ReplicationStream } from '../../connectors/postgres-cdc/src/replication-stream.ts';
import { TableFilter } from '../../connectors/postgres-cdc/src/table-filter.ts';
import { SESSION_OPTIONS } from '../../connectors/postgres-cdc/src/text-values.ts';
import { TypeRegistry } from '../../connectors/postgres-cdc/src/type-registry.ts';
import type { SourceRecord } from '../../src/connect/api/index.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { recvlogicalSeconds } from './pg-recvlogical.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const TXNS = Number(process.env.BENCH_TXNS ?? 100_000);
const TYPED_TXNS = Number(process.env.BENCH_TYPED_TXNS ?? 20_000);

/** 20 columns of the types a real schema has, and the values row `x` gets. */
const TYPED_DDL = `CREATE TABLE typed (
  id int PRIMARY KEY, a smallint, b bigint, c numeric(12,2), d real, e double precision,
  f boolean, g text, h varchar(64), i char(8), j date, k time, l timestamp, m timestamptz,
  n interval, o uuid, p jsonb, q bytea, r inet, s int4[])`;
const TYPED_ROW = (x: string) => `${x}, (${x} % 30000)::smallint, ${x}::bigint * 1000,
  (${x} * 1.25)::numeric(12,2), ${x}::real / 3, ${x}::float8 / 7, ${x} % 2 = 0,
  'text ' || ${x}, 'varchar ' || ${x}, lpad((${x} % 1000)::text, 8, '0'),
  date '2024-01-01' + ${x} % 365, time '12:00' + (${x} % 3600) * interval '1 second',
  timestamp '2024-01-01' + ${x} * interval '1 second',
  timestamptz '2024-01-01 00:00+00' + ${x} * interval '1 second',
  (${x} % 100) * interval '1 minute', md5(${x}::text)::uuid,
  jsonb_build_object('id', ${x}, 'tag', 'k' || ${x} % 10), decode(md5(${x}::text), 'hex'),
  ('10.0.' || ${x} % 256 || '.' || ${x} % 200)::inet, ARRAY[${x}, ${x} + 1, ${x} + 2]`;

const cluster = await startPostgres();
try {
  const db = await cluster.freshDatabase('bench');
  const conn = cluster.connectionConfig(db);
  const sql = new pg.Client({ ...conn, options: SESSION_OPTIONS });
  await sql.connect();
  await sql.query('CREATE TABLE small (id int PRIMARY KEY, v int NOT NULL, t text)');
  await sql.query(TYPED_DDL);
  await ensurePublication(sql, 'bench_pub', 'filtered', [
    { schema: 'public', table: 'small' },
    { schema: 'public', table: 'typed' },
  ]);

  for (const [label, workload, events] of [
    [
      `1tx_${ROWS}`,
      `INSERT INTO small SELECT i, i, 'row ' || i FROM generate_series(1, ${ROWS}) i`,
      ROWS,
    ],
    [
      `${TXNS}tx_10rows`,
      `DO $$ BEGIN FOR k IN 0..${TXNS - 1} LOOP
         INSERT INTO small SELECT ${ROWS} + k * 10 + i, i, 'tx row' FROM generate_series(1, 10) i; COMMIT;
       END LOOP; END $$`,
      TXNS * 10,
    ],
    [
      `${TYPED_TXNS}tx_10rows_20_typed_columns`,
      `DO $$ BEGIN FOR k IN 0..${TYPED_TXNS - 1} LOOP
         INSERT INTO typed SELECT ${TYPED_ROW('(k * 10 + i)')} FROM generate_series(1, 10) i; COMMIT;
       END LOOP; END $$`,
      TYPED_TXNS * 10,
    ],
  ] as const) {
    const slots = ['recv', 'frames', 'events'];
    for (const s of slots)
      await sql.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [s]);
    await sql.query(workload);
    const end = parseLsn(
      (await sql.query('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l,
    );
    await sql.query('SELECT pg_switch_wal()'); // flush the tail so every consumer can reach `end`

    const recvSeconds = await runRecvlogical(cluster, db, end);
    print(`cdc.${label}.pg_recvlogical`, events / recvSeconds, 'events/s');

    const frames: Buffer[] = [];
    const frameSeconds = await runStream(conn, 'frames', events, (f) => {
      if (frames.length < 2_000_000) frames.push(Buffer.from(f));
    });
    print(`cdc.${label}.stream_decode`, events / frameSeconds, 'events/s');

    const eventSeconds = await runEvents(conn, 'events', events, db);
    print(`cdc.${label}.debezium_events`, events / eventSeconds, 'events/s');
    print(`cdc.${label}.events_vs_pg_recvlogical`, (recvSeconds / eventSeconds) * 100, '%');

    // Pure parse rate on the captured frames: ours vs pg-logical-replication's parser.
    let t = performance.now();
    for (const f of frames) decodePgoutput(f);
    const ours = (performance.now() - t) / 1000;
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: ['bench_pub'] });
    t = performance.now();
    for (const f of frames) plugin.parse(f);
    const theirs = (performance.now() - t) / 1000;
    print(`cdc.${label}.parse.ours`, frames.length / ours, 'messages/s');
    print(`cdc.${label}.parse.pg_logical_replication`, frames.length / theirs, 'messages/s');
    print(`cdc.${label}.build.ours`, await buildRate(conn, db, frames), 'events/s');
    for (const s of slots) await sql.query('SELECT pg_drop_replication_slot($1)', [s]);
    await sql.query('TRUNCATE small, typed');
  }
  print('cdc.peak_rss', process.resourceUsage().maxRSS / 1024, 'MB');
  await sql.end();
} finally {
  await cluster.stop();
}

function print(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value >= 100 ? Math.round(value) : value.toFixed(1)} ${unit}`);
}

function runRecvlogical(c: typeof cluster, db: string, end: Lsn): Promise<number> {
  return recvlogicalSeconds(
    { ...c, database: db, slot: 'recv', publication: 'bench_pub' },
    formatLsn(end),
  );
}

async function runStream(
  conn: pg.ClientConfig,
  slot: string,
  events: number,
  onPayload: (f: Buffer) => void,
): Promise<number> {
  let inserts = 0;
  const started = performance.now();
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const stream = new ReplicationStream({
    connection: { ...conn, options: SESSION_OPTIONS },
    slotName: slot,
    publicationNames: ['bench_pub'],
    startLsn: 0,
    statusIntervalMs: 10_000,
    onMessage(m) {
      if (m.tag === 'insert') inserts++;
      else if (m.tag === 'commit' && inserts >= events) finish();
    },
    onPayload,
  });
  await stream.start();
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await stream.stop();
  return seconds;
}

function eventSource(
  catalog: pg.Client,
  registry: TypeRegistry,
  db: string,
  emit: (r: SourceRecord[]) => void,
  onCommit: () => void,
): ChangeEventSource {
  return new ChangeEventSource({
    context: {
      serverName: 'bench',
      database: db,
      tombstonesOnDelete: true,
      provideTransactionMetadata: false,
      sourcePartition: { server: 'bench' },
      nowMs: Date.now,
    },
    catalog,
    registry,
    modes: { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' },
    filter: TableFilter.everything(),
    topicPrefix: 'bench',
    skippedOperations: new Set(),
    emit,
    onCommit,
    onError: (e) => {
      throw e;
    },
  });
}

/**
 * Events/s of decodePgoutput + ChangeEventSource over captured frames. The table's
 * Relation message (it needs catalog lookups) is handed over first, outside the
 * timing; the timed pass leaves Relation messages out, as a stream that knows the
 * table has none to handle.
 */
async function buildRate(conn: pg.ClientConfig, db: string, frames: Buffer[]): Promise<number> {
  const catalog = new pg.Client({ ...conn, options: SESSION_OPTIONS });
  await catalog.connect();
  const registry = new TypeRegistry(catalog);
  await registry.load();
  let count = 0;
  const source = eventSource(
    catalog,
    registry,
    db,
    (r) => {
      count += r.length;
    },
    () => undefined,
  );
  const isRelation = (f: Buffer) => f[0] === 0x52; // 'R'
  const relation = frames.find(isRelation);
  if (relation) source.accept(decodePgoutput(relation), 0);
  while (source.busy) await new Promise((r) => setTimeout(r, 5));
  const replay = frames.filter((f) => !isRelation(f));
  const t = performance.now();
  for (let i = 0; i < replay.length; i++) source.accept(decodePgoutput(replay[i]), i + 1);
  const seconds = (performance.now() - t) / 1000;
  await catalog.end();
  if (count === 0) throw new Error('no events built');
  return count / seconds;
}

async function runEvents(
  conn: pg.ClientConfig,
  slot: string,
  events: number,
  db: string,
): Promise<number> {
  const catalog = new pg.Client({ ...conn, options: SESSION_OPTIONS });
  await catalog.connect();
  const registry = new TypeRegistry(catalog);
  await registry.load();
  let count = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const source = eventSource(
    catalog,
    registry,
    db,
    (r) => {
      count += r.length;
    },
    () => {
      if (count >= events) finish();
    },
  );
  const started = performance.now();
  const stream = new ReplicationStream({
    connection: { ...conn, options: SESSION_OPTIONS },
    slotName: slot,
    publicationNames: ['bench_pub'],
    startLsn: 0,
    statusIntervalMs: 10_000,
    onMessage: (m, lsn) => source.accept(m, lsn),
  });
  await stream.start();
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await stream.stop();
  await catalog.end();
  if (count === 0) throw new Error('no events');
  return seconds;
}
