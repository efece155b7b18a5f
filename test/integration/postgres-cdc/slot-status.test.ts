/**
 * The CDC connector's slot in its REST status (`external`), through `connect
 * standalone`: while streaming (held by the task, lag and retained WAL as numbers),
 * and once the connector is STOPPED, when nothing reads the slot and the WAL it
 * retains grows with every write: the status is where a user sees that.
 */
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { cdcConnectorConfig, rest, startCdcWorker, useDatabase, waitFor } from './cdc-worker.ts';

const cluster = usePostgres();

interface SlotStatus {
  name: string;
  exists: boolean;
  active?: boolean;
  holder?: { pid: number; application_name: string | null } | null;
  retained_wal_bytes?: number;
  lag_bytes?: number;
  confirmed_flush_lsn?: string;
}

describe('Postgres CDC through a standalone worker: the slot in the status', () => {
  it('shows the slot held while streaming, and its growing lag once the connector is stopped', async () => {
    const { db, sql } = await useDatabase(
      cluster(),
      'slotstatus',
      'CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, $$a$$)',
    );
    const worker = await startCdcWorker(
      useTmpDir(),
      'lagging',
      cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.t' }),
    );
    await worker.process.waitForLine('snapshot done');

    const streaming = await waitFor('the slot to be held by the task', async () => {
      const s = await rest(worker, 'GET', '/connectors/lagging/status');
      const slot = s.body.external?.replication_slot as SlotStatus | undefined;
      return slot?.active ? { body: s.body, slot } : undefined;
    });
    expect(streaming.body.connector.state).toBe('RUNNING');
    expect(streaming.slot).toMatchObject({ name: db, exists: true });
    expect(streaming.slot.holder?.pid).toEqual(expect.any(Number));
    expect(streaming.slot.retained_wal_bytes).toEqual(expect.any(Number));
    expect(streaming.slot.lag_bytes).toEqual(expect.any(Number));
    expect(streaming.body.external.publication).toMatchObject({ name: db, exists: true });

    expect((await rest(worker, 'PUT', '/connectors/lagging/stop')).status).toBe(204);
    await waitFor('the connector to stop and let go of the slot', async () => {
      const s = await rest(worker, 'GET', '/connectors/lagging/status');
      return s.body.connector.state === 'STOPPED' &&
        s.body.external?.replication_slot?.active === false
        ? true
        : undefined;
    });
    // About 2 MB of WAL nobody reads.
    await sql.query("INSERT INTO t SELECT g, repeat('x', 1000) FROM generate_series(2, 2001) AS g");

    const stopped = await waitFor('the stopped connector to report the WAL behind it', async () => {
      const s = await rest(worker, 'GET', '/connectors/lagging/status');
      const slot = s.body.external?.replication_slot as SlotStatus | undefined;
      return slot && (slot.lag_bytes ?? 0) > 1_000_000 ? { body: s.body, slot } : undefined;
    });
    expect(stopped.body.connector.state).toBe('STOPPED');
    expect(stopped.slot).toMatchObject({ exists: true, active: false, holder: null });
    expect(stopped.slot.retained_wal_bytes).toBeGreaterThan(1_000_000);
  });
});
