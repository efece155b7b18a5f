/**
 * kill -9 of a standalone worker in the middle of a large stream (60k row changes in
 * 600 transactions), then a restart on the same broker data and offsets file: every
 * committed change is in the topic, in order per key, and the only duplicates are
 * changes delivered after the last offset commit. Throughout, the slot's
 * confirmed_flush_lsn never passes what the offsets file holds: a transaction may be
 * confirmed only once the stored offset covers its last change.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  cdcConnectorConfig,
  endOffset,
  readTopic,
  startCdcWorker,
  useAdmin,
  waitFor,
} from './cdc-worker.ts';

const cluster = usePostgres();
const TOPIC = 'PostgreSQL_server.public.big';
const ROWS = 10_000;
const ROWS_PER_TX = 100;
const UPDATE_ROUNDS = 5;
const CHANGES = ROWS * (1 + UPDATE_ROUNDS);

/** Inserts every row with v = 0, then UPDATE_ROUNDS rounds of v = v + 1, ROWS_PER_TX rows a transaction. */
const GENERATOR = `
DO $$
BEGIN
  FOR tx IN 0..${ROWS / ROWS_PER_TX - 1} LOOP
    INSERT INTO big SELECT g, 0 FROM generate_series(tx * ${ROWS_PER_TX}, tx * ${ROWS_PER_TX} + ${ROWS_PER_TX - 1}) g;
    COMMIT;
    -- Paced (about 3 s in all), so the kill lands mid-stream however fast the worker is.
    PERFORM pg_sleep(0.005);
  END LOOP;
  FOR round IN 1..${UPDATE_ROUNDS} LOOP
    FOR tx IN 0..${ROWS / ROWS_PER_TX - 1} LOOP
      UPDATE big SET v = v + 1 WHERE id BETWEEN tx * ${ROWS_PER_TX} AND tx * ${ROWS_PER_TX} + ${ROWS_PER_TX - 1};
      COMMIT;
      PERFORM pg_sleep(0.005);
    END LOOP;
  END LOOP;
END $$`;

interface StoredOffset {
  txId: number;
  lsn_proc: number;
  lsn_commit: number;
}

function storedOffset(file: string): StoredOffset | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const entries = JSON.parse(text).offsets as Array<[string, string]>;
  const value = entries.find(([k]) => k.includes('PostgreSQL_server'))?.[1];
  if (!value) return null;
  const o = JSON.parse(value);
  return o.lsn_commit === undefined ? null : o;
}

async function confirmedFlush(sql: pg.Client, slot: string): Promise<number | null> {
  const r = await sql.query(
    `SELECT (confirmed_flush_lsn - '0/0')::bigint::text AS lsn FROM pg_replication_slots WHERE slot_name = $1`,
    [slot],
  );
  return r.rows[0]?.lsn == null ? null : Number(r.rows[0].lsn);
}

describe('Postgres CDC worker killed with SIGKILL mid-stream', () => {
  it('delivers every committed change in order per key after a restart, and the slot never passes the stored offset', {
    timeout: 180_000,
  }, async () => {
    const dir = useTmpDir();
    const db = await cluster().freshDatabase('crash');
    const sql = await cluster().client(db);
    sql.on('error', () => undefined);
    const writer = await cluster().client(db);
    writer.on('error', () => undefined);
    let sampling = false;
    let sampler: Promise<void> = Promise.resolve();
    try {
      await sql.query('CREATE TABLE big (id int PRIMARY KEY, v int NOT NULL)');
      const connector = cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.big' });
      const schemaless = {
        worker: {
          'key.converter.schemas.enable': 'false',
          'value.converter.schemas.enable': 'false',
          'offset.flush.interval.ms': '200',
        },
      };
      const offsetsFile = join(dir, 'connect.offsets');
      // (confirmed LSN, stored offset read just after it): stored only grows, so each
      // pair bounds what the slot may have confirmed at the time it was read.
      const samples: Array<{ confirmed: number; stored: StoredOffset | null }> = [];
      sampling = true;
      sampler = (async () => {
        while (sampling) {
          const confirmed = await confirmedFlush(sql, db);
          if (confirmed !== null) samples.push({ confirmed, stored: storedOffset(offsetsFile) });
          await new Promise((r) => setTimeout(r, 50));
        }
      })();

      const first = await startCdcWorker(dir, 'big', connector, schemaless);
      const admin = await useAdmin(first.bootstrap);
      await waitFor('the snapshot of the empty table to finish', async () =>
        (await sql.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [db]))
          .rowCount === 1
          ? true
          : undefined,
      );
      const generating = writer.query(GENERATOR);
      // Kill once a quarter of the stream is out and offsets were committed mid-stream
      // (the stored offset has moved at least once), so the restart resumes from the middle.
      let firstStored: number | null = null;
      await waitFor(
        'a quarter of the changes in the topic and a mid-stream offset commit',
        async () => {
          const stored = storedOffset(offsetsFile);
          if (stored && firstStored === null) firstStored = stored.lsn_commit;
          const enough = ((await endOffset(admin, TOPIC)) ?? 0) >= CHANGES / 4;
          return enough && stored && stored.lsn_commit !== firstStored ? true : undefined;
        },
        90_000,
      );
      const atKill = (await endOffset(admin, TOPIC)) ?? 0;
      await admin.disconnect();
      first.process.signal('SIGKILL');
      await first.process.exited;
      const storedAtKill = storedOffset(offsetsFile)!;
      await generating;

      const second = await startCdcWorker(dir, 'big', connector, schemaless);
      const admin2 = await useAdmin(second.bootstrap);
      // Everything is delivered and stored once the slot is confirmed past the
      // generator's last commit (the task confirms nothing before its offset is stored).
      const finalLsn = Number(
        (await sql.query("SELECT (pg_current_wal_lsn() - '0/0')::bigint::text AS l")).rows[0].l,
      );
      let seen = 0;
      await waitFor(
        'the slot confirmed past the last change',
        async () => {
          seen = (await endOffset(admin2, TOPIC)) ?? 0;
          return ((await confirmedFlush(sql, db)) ?? 0) >= finalLsn || undefined;
        },
        120_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message} (${seen} records in the topic)`);
      });
      const lastTx = storedOffset(offsetsFile)!;
      sampling = false;
      await sampler;

      const records = await readTopic(second.bootstrap, TOPIC);
      const byKey = new Map<number, number[]>();
      // txId -> first and last change LSN, to know where each transaction starts.
      const txs = new Map<number, { min: number; max: number }>();
      for (const r of records) {
        const key = JSON.parse(r.key!).id as number;
        const value = JSON.parse(r.value!);
        const list = byKey.get(key) ?? [];
        list.push(value.after.v);
        byKey.set(key, list);
        const t = txs.get(value.source.txId) ?? { min: value.source.lsn, max: value.source.lsn };
        t.min = Math.min(t.min, value.source.lsn);
        t.max = Math.max(t.max, value.source.lsn);
        txs.set(value.source.txId, t);
      }
      expect(byKey.size).toBe(ROWS);
      const expected = Array.from({ length: UPDATE_ROUNDS + 1 }, (_, i) => i);
      const range = (from: number) => expected.slice(from);
      for (const [key, values] of byKey) {
        // In order per key: 0..5, or 0..k then a redelivered run j..5 with j <= k + 1
        // (one crash, one replay of what was produced after the last offset commit).
        const restart = values.findIndex((v, i) => i > 0 && v <= values[i - 1]);
        const ok =
          restart === -1
            ? values.join() === expected.join()
            : values.slice(0, restart).join() === expected.slice(0, restart).join() &&
              values[restart] <= restart &&
              values.slice(restart).join() === range(values[restart]).join();
        if (!ok) throw new Error(`key ${key} has v in the order ${values.join(', ')}`);
      }
      const duplicates = records.length - CHANGES;
      console.log(
        `crash test: ${atKill} records in the topic just before the kill, ${records.length} after ` +
          `the restart: ${duplicates} duplicates (redelivered from the uncommitted window); ` +
          `${samples.length} slot samples`,
      );
      // The replay starts right after the stored offset: the first worker delivered
      // `stored + duplicates` records, and the second one's first record is the one
      // after the stored one.
      const parsed = records.map((r) => JSON.parse(r.value!).source);
      // Its first occurrence is the first run's (a redelivered copy comes later).
      const storedIndex = parsed.findIndex(
        (src) => src.txId === storedAtKill.txId && src.lsn === storedAtKill.lsn_proc,
      );
      expect(storedIndex).toBeGreaterThan(0);
      const firstRunLength = storedIndex + 1 + duplicates;
      expect(firstRunLength).toBeGreaterThanOrEqual(atKill);
      expect(records[firstRunLength].key).toBe(records[storedIndex + 1].key);
      expect(parsed[firstRunLength].lsn).toBe(parsed[storedIndex + 1].lsn);

      // The slot never passed the stored offset. Postgres re-sends on restart every
      // transaction whose commit record starts at or after confirmed_flush_lsn, so a
      // confirmed position is safe while it stays at or before the commit of the first
      // transaction the stored offset does not fully cover.
      //   - Stored offset inside a transaction: the connector has received it, and
      //     confirms nothing (not even keepalives) until it is stored whole, so the
      //     bound is the transaction's last change.
      //   - Stored offset covering a transaction whole: an idle keepalive may confirm
      //     into the next one while it is still being written (its changes, even all of
      //     them, are in the WAL, its commit is not, and Postgres has sent nothing of
      //     it), so the bound is the next transaction's commit. Commit LSNs come from
      //     Debezium's source.sequence: [commit LSN of the transaction before, this LSN].
      const commits = [
        ...new Set(
          parsed
            .map((src) => (JSON.parse(src.sequence) as [string | null, string | null])[0])
            .filter((c): c is string => c !== null)
            .map(Number),
        ),
      ].sort((a, b) => a - b);
      expect(commits.length).toBeGreaterThan(txs.size / 2);
      const commitAfter = (lsn: number) => commits.find((c) => c > lsn) ?? Number.POSITIVE_INFINITY;
      const order = [...txs.entries()].sort((a, b) => a[1].min - b[1].min);
      const nextEnd = new Map<number, number>();
      order.forEach(([txId], i) => {
        nextEnd.set(
          txId,
          i + 1 < order.length ? commitAfter(order[i + 1][1].max) : Number.POSITIVE_INFINITY,
        );
      });
      let checked = 0;
      for (const { confirmed, stored } of samples) {
        if (stored === null) continue;
        const t = txs.get(stored.txId);
        if (!t) continue;
        const bound = stored.lsn_proc >= t.max ? nextEnd.get(stored.txId)! : t.max;
        expect(confirmed).toBeLessThanOrEqual(bound);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
      expect(lastTx.lsn_commit).toBeGreaterThan(0);
    } finally {
      sampling = false;
      await sampler;
      await writer.end().catch(() => undefined);
      await sql.end().catch(() => undefined);
    }
  });
});
