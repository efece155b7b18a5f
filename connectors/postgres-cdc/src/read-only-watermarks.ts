/**
 * Watermarks that write nothing, for `read.only=true` incremental snapshots (Debezium's
 * read-only strategy for Postgres): instead of an open and a close row in the signal
 * table, a chunk is read in a REPEATABLE READ transaction that also answers its own
 * snapshot (pg_current_snapshot()) and the WAL position of that moment.
 *
 * Why that is enough for DBLog's guarantee (no read overwrites a newer change):
 *   - A streamed change of a chunk's key whose transaction the snapshot does not see
 *     (it committed after the snapshot was taken, or was still running) is newer than
 *     the read: it drops the read of that key, as a change inside an open/close window
 *     does.
 *   - A transaction the snapshot sees committed before the snapshot was taken, so its
 *     commit record is in the WAL before `position` (read in the same statement, after
 *     the snapshot). Once the stream has passed `position`, every such transaction has
 *     been streamed, and the reads that are left can go out: anything streamed later is
 *     newer than them.
 * The stream passes `position` at its first change at or past it, or, when it is idle,
 * at a keepalive whose wal_end is at or past it (the server has decoded up to there).
 *
 * Transaction ids: pgoutput's Begin carries a 32-bit xid, pg_current_snapshot() 64-bit
 * ones (epoch and xid); a streamed xid is widened next to the snapshot's xmax, as
 * Postgres widens xids (it is within 2^31 of it).
 *
 * Used by incremental-snapshot.ts with `read.only=true`. The stream releases a chunk
 * at its first change of a transaction that committed at or past `position`, or, when
 * idle, at a keepalive between transactions whose wal_end is past it (the chunk loop
 * asks for keepalives while chunks wait, since the server sends them unprompted only
 * every wal_sender_timeout/2). The insert position can sit just past a page header,
 * which no record reaches (walPassed).
 *
 * What the changes kept can miss: they are kept from the snapshot's request on. With
 * synchronous replication a transaction's commit can be streamed before it is visible
 * (the backend waits for the standby before it leaves the running ones); one streamed
 * before the request and still waiting when a chunk's snapshot is taken, on a key of
 * that chunk, would not drop its older read.
 */
import type pg from 'pg';
import { type Lsn, parseLsn } from './lsn.ts';

/** pg_snapshot: transactions below xmin are finished, from xmax on not yet started. */
export interface PgSnapshot {
  readonly xmin: bigint;
  readonly xmax: bigint;
  /** Transactions in progress when the snapshot was taken. */
  readonly inProgress: ReadonlySet<bigint>;
}

/** pg_snapshot's text form, `xmin:xmax:xip,xip,...` (the list may be empty). */
export function parsePgSnapshot(text: string): PgSnapshot {
  const m = /^(\d+):(\d+):([\d,]*)$/.exec(text.trim());
  if (!m) throw new Error(`not a pg_snapshot: ${JSON.stringify(text)}`);
  const xip = m[3] === '' ? [] : m[3].split(',').map((x) => BigInt(x));
  return { xmin: BigInt(m[1]), xmax: BigInt(m[2]), inProgress: new Set(xip) };
}

const EPOCH = 1n << 32n;
const HALF = 1n << 31n;

/** A 32-bit xid as the 64-bit one nearest to `reference` (Postgres's widening). */
export function widenXid(xid32: number, reference: bigint): bigint {
  let full = (reference & ~(EPOCH - 1n)) | BigInt(xid32 >>> 0);
  if (full > reference + HALF) full -= EPOCH;
  else if (full < reference - HALF) full += EPOCH;
  return full;
}

/** Whether the snapshot saw the (committed) transaction `xid32` as committed. */
export function sawCommitted(snapshot: PgSnapshot, xid32: number): boolean {
  const xid = widenXid(xid32, snapshot.xmax);
  if (xid < snapshot.xmin) return true;
  if (xid >= snapshot.xmax) return false;
  return !snapshot.inProgress.has(xid);
}

/** What a read-only chunk's transaction answers before it reads. */
export interface ChunkSnapshot {
  readonly snapshot: PgSnapshot;
  /** WAL position after the snapshot: the stream past it has every change the snapshot saw. */
  readonly position: Lsn;
}

/**
 * Starts the chunk's transaction on `client` and answers its snapshot and position;
 * the caller reads the chunk in it, then commits. On a standby the position is the
 * replay position (pg_current_wal_insert_lsn() fails during recovery).
 */
export async function beginChunkSnapshot(client: pg.Client): Promise<ChunkSnapshot> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const r = await client.query<{ snapshot: string; position: string }>(
    `SELECT pg_current_snapshot()::text AS snapshot,
            (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                  ELSE pg_current_wal_insert_lsn() END)::text AS position`,
  );
  const row = r.rows[0];
  if (!row) throw new Error('pg_current_snapshot() answered no row');
  return { snapshot: parsePgSnapshot(row.snapshot), position: parseLsn(row.position) };
}

const PAGE_BYTES = 8192;
/** XLogPageHeaderData and XLogLongPageHeaderData (the first page of a segment). */
const SHORT_HEADER = 24;
const LONG_HEADER = 40;

/**
 * Whether a stream at `streamed` (a keepalive's wal_end, or a commit's LSN) has passed
 * `position`. The insert position can sit just past a page header, where no record
 * ends: a stream that reached the page's start has passed it too.
 */
export function walPassed(streamed: Lsn, position: Lsn, segmentBytes: number): boolean {
  if (streamed >= position) return true;
  const header =
    position % segmentBytes === LONG_HEADER
      ? LONG_HEADER
      : position % PAGE_BYTES === SHORT_HEADER
        ? SHORT_HEADER
        : 0;
  return header > 0 && streamed >= position - header;
}

/** The server's WAL segment size in bytes. */
export async function walSegmentBytes(client: pg.Client): Promise<number> {
  const r = await client.query<{ n: string }>(
    "SELECT pg_size_bytes(current_setting('wal_segment_size'))::text AS n",
  );
  return Number(r.rows[0]?.n ?? 16 * 1024 * 1024);
}
