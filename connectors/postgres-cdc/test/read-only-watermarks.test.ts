/**
 * The pieces of read.only incremental snapshots (read-only-watermarks.ts): pg_snapshot
 * parsing, xid widening across an epoch, and, on the machine's Postgres at
 * 127.0.0.1:5432, which transactions a chunk's snapshot sees: one committed before it,
 * not one running while it is taken nor one started after.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLsn } from '../src/lsn.ts';
import {
  beginChunkSnapshot,
  parsePgSnapshot,
  sawCommitted,
  widenXid,
} from '../src/read-only-watermarks.ts';

const MACHINE = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' };

describe('read-only watermarks', () => {
  it('parses pg_snapshot text, with and without transactions in progress', () => {
    expect(parsePgSnapshot('10:20:12,15')).toEqual({
      xmin: 10n,
      xmax: 20n,
      inProgress: new Set([12n, 15n]),
    });
    expect(parsePgSnapshot('7:7:').inProgress.size).toBe(0);
    expect(() => parsePgSnapshot('7:x:')).toThrow(/not a pg_snapshot/);
  });

  it('widens a 32-bit xid next to the snapshot, across an epoch boundary', () => {
    const epoch = 1n << 32n;
    expect(widenXid(100, 3n * epoch + 90n)).toBe(3n * epoch + 100n);
    // Just before the boundary, seen from just after it (and the other way round).
    expect(widenXid(0xfffffff0, 4n * epoch + 5n)).toBe(3n * epoch + 0xfffffff0n);
    expect(widenXid(5, 3n * epoch + 0xfffffff0n)).toBe(4n * epoch + 5n);
    const s = parsePgSnapshot(`${4n * epoch + 2n}:${4n * epoch + 8n}:${4n * epoch + 3n}`);
    expect(sawCommitted(s, 0xfffffff0)).toBe(true);
    expect(sawCommitted(s, 2)).toBe(true);
    expect(sawCommitted(s, 3)).toBe(false);
    expect(sawCommitted(s, 8)).toBe(false);
  });

  describe('on a real Postgres', () => {
    const clients: pg.Client[] = [];
    const client = async () => {
      const c = new pg.Client(MACHINE);
      await c.connect();
      clients.push(c);
      return c;
    };
    const xid32 = async (c: pg.Client) =>
      Number((await c.query<{ x: string }>('SELECT txid_current()::text AS x')).rows[0].x) %
      2 ** 32;
    beforeAll(async () => {
      const c = await client();
      await c.query('CREATE TEMP TABLE IF NOT EXISTS t (id int)');
    });
    afterAll(async () => {
      for (const c of clients) await c.end().catch(() => {});
    });

    it('sees what committed before its snapshot, not what ran during it or came after', async () => {
      const before = await client();
      await before.query('BEGIN');
      const committed = await xid32(before);
      await before.query('COMMIT');
      const running = await client();
      await running.query('BEGIN');
      const during = await xid32(running);
      const reader = await client();
      const chunk = await beginChunkSnapshot(reader);
      const insert = (
        await reader.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')
      ).rows[0].l;
      await reader.query('COMMIT');
      await running.query('COMMIT');
      const after = await client();
      await after.query('BEGIN');
      const later = await xid32(after);
      await after.query('COMMIT');

      expect(sawCommitted(chunk.snapshot, committed)).toBe(true);
      expect(sawCommitted(chunk.snapshot, during)).toBe(false);
      expect(sawCommitted(chunk.snapshot, later)).toBe(false);
      expect(chunk.position).toBeGreaterThan(0);
      expect(chunk.position).toBeLessThanOrEqual(parseLsn(insert));
    });
  });
});
