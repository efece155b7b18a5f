/**
 * Test support for the CDC tests: collecting a replication stream's messages and
 * waiting for a condition Postgres reaches asynchronously (slot positions).
 */
import type pg from 'pg';
import type { Lsn } from '../src/lsn.ts';
import type { PgoutputMessage } from '../src/pgoutput-decoder.ts';
import { ReplicationStream } from '../src/replication-stream.ts';

/** Re-check `probe` until it returns a value other than undefined (at most `ms`). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface Collected {
  stream: ReplicationStream;
  messages: PgoutputMessage[];
  /** Resolves when `n` commits have been received in total. */
  commits(n: number): Promise<PgoutputMessage[]>;
  stop(): Promise<void>;
}

export async function collect(
  connection: pg.ClientConfig,
  slotName: string,
  publication: string,
  startLsn: Lsn,
  messages = false,
): Promise<Collected> {
  const received: PgoutputMessage[] = [];
  let commitCount = 0;
  let waiters: Array<{ n: number; resolve: () => void }> = [];
  const stream = new ReplicationStream({
    connection,
    slotName,
    publicationNames: [publication],
    startLsn,
    statusIntervalMs: 10_000,
    messages,
    onMessage(m) {
      received.push(m);
      if (m.tag === 'commit') {
        commitCount++;
        waiters = waiters.filter((w) => {
          if (commitCount < w.n) return true;
          w.resolve();
          return false;
        });
      }
    },
  });
  const { done } = await stream.start();
  let failure: unknown;
  done.catch((e) => {
    failure = e;
  });
  return {
    stream,
    messages: received,
    async commits(n) {
      if (commitCount < n) {
        await Promise.race([
          new Promise<void>((resolve) => waiters.push({ n, resolve })),
          done.then(() => {
            throw new Error('stream ended');
          }),
        ]);
      }
      if (failure) throw failure;
      return received;
    },
    stop: () => stream.stop(),
  };
}

import pgModule from 'pg';
import { afterEach } from 'vitest';
import type { SourceRecord, TaskConfig } from '../../../src/connect/api/index.ts';
import type { PostgresCluster } from '../../../test/helpers/postgres.ts';
import { ChangeEventSource, type CompletedTransaction } from '../src/change-event-source.ts';
import { PostgresCdcSourceTask } from '../src/postgres-cdc-task.ts';
import { ensurePublication } from '../src/publication.ts';
import { createSlotExportingSnapshot, dropSlot } from '../src/replication-slot.ts';
import { TableFilter } from '../src/table-filter.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import type { MappingModes } from '../src/type-mapping.ts';
import { TypeRegistry } from '../src/type-registry.ts';
import { InMemoryOffsets, TaskDriver } from './task-driver.ts';

export interface Capture {
  records: SourceRecord[];
  transactions: CompletedTransaction[];
  /**
   * Resolves once `n` transactions have completed in total; rejects as soon as the
   * source or the stream fails.
   */
  transactionsDone(n: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Stream a database's changes through ChangeEventSource, the way the task does:
 * filtered publication on `tables` (in schema public), a slot named after the database.
 */
export async function capture(
  connection: pg.ClientConfig,
  tables: string[],
  opts: Partial<MappingModes> & { tombstonesOnDelete?: boolean; skipped?: string[] } = {},
): Promise<Capture> {
  const db = String(connection.database);
  const catalog = new pgModule.Client({ ...connection, options: SESSION_OPTIONS });
  await catalog.connect();
  await ensurePublication(
    catalog,
    'dbz_publication',
    'filtered',
    tables.map((table) => ({ schema: 'public', table })),
  );
  const snap = await createSlotExportingSnapshot(connection, db);
  await snap.release();
  const registry = new TypeRegistry(catalog);
  await registry.load();
  const records: SourceRecord[] = [];
  const transactions: CompletedTransaction[] = [];
  let waiters: Array<{ n: number; resolve: () => void }> = [];
  let failure: unknown;
  let fail: (e: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = (e) => {
      failure ??= e;
      reject(failure);
    };
  });
  failed.catch(() => undefined);
  const source = new ChangeEventSource({
    context: {
      serverName: 'PostgreSQL_server',
      database: db,
      tombstonesOnDelete: opts.tombstonesOnDelete ?? true,
      provideTransactionMetadata: false,
      sourcePartition: { server: 'PostgreSQL_server' },
      nowMs: () => 1_700_000_000_000,
    },
    catalog,
    registry,
    modes: {
      decimalHandlingMode: opts.decimalHandlingMode ?? 'precise',
      timePrecisionMode: opts.timePrecisionMode ?? 'adaptive',
    },
    filter: TableFilter.everything(),
    topicPrefix: 'PostgreSQL_server',
    skippedOperations: new Set(opts.skipped ?? []),
    emit: (r) => records.push(...r),
    onCommit: (tx) => {
      transactions.push(tx);
      waiters = waiters.filter((w) => {
        if (transactions.length < w.n) return true;
        w.resolve();
        return false;
      });
    },
    onError: fail,
  });
  const stream = new ReplicationStream({
    connection: { ...connection, options: SESSION_OPTIONS },
    slotName: db,
    publicationNames: ['dbz_publication'],
    startLsn: snap.consistentPoint,
    statusIntervalMs: 10_000,
    onMessage: (m, lsn) => source.accept(m, lsn),
  });
  const { done } = await stream.start();
  done.catch(fail);
  return {
    records,
    transactions,
    async transactionsDone(n) {
      if (transactions.length < n) {
        // The timer is only armed while waiting and always cleared: a deadline left
        // running after the wait would reject later, unobserved, and fail the run.
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<void>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                failure ?? new Error(`only ${transactions.length} of ${n} transactions arrived`),
              ),
            20_000,
          );
        });
        try {
          await Promise.race([
            new Promise<void>((resolve) => waiters.push({ n, resolve })),
            deadline,
            failed,
          ]);
        } finally {
          clearTimeout(timer);
        }
      }
      if (failure) throw failure;
    },
    async stop() {
      await stream.stop();
      await dropSlot(catalog, db).catch(() => undefined);
      await catalog.end();
    },
  };
}

/** A record's value as the Debezium envelope it is (null for tombstones). */
export interface Envelope {
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  source: Record<string, unknown>;
  op: string;
  ts_ms: number;
  transaction: unknown;
}

export function envelope(r: SourceRecord): Envelope {
  return r.value as Envelope;
}

/** A replication connection holding a slot, as another consumer (pg_recvlogical, a second connector) would. */
export interface SlotHolder {
  /** The walsender's pid: what pg_replication_slots.active_pid shows. */
  pid: number;
  release(): Promise<void>;
}

/**
 * Stream from `slotName` on a connection named `applicationName` until release().
 * Creates the slot (pgoutput) when missing, and the publication it reads if needed.
 */
export async function holdSlot(
  connection: pg.ClientConfig,
  slotName: string,
  applicationName: string,
  publication = 'dbz_publication',
): Promise<SlotHolder> {
  const admin = new pgModule.Client(connection);
  await admin.connect();
  try {
    const pub = await admin.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [publication]);
    if (pub.rowCount === 0)
      // Without tables, so a connector with publication.autocreate.mode=filtered can set them.
      await admin.query(`CREATE PUBLICATION ${admin.escapeIdentifier(publication)}`);
    await admin.query(
      `SELECT pg_create_logical_replication_slot($1, 'pgoutput')
        WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`,
      [slotName],
    );
    const stream = new ReplicationStream({
      connection: { ...connection, application_name: applicationName } as pg.ClientConfig,
      slotName,
      publicationNames: [publication],
      startLsn: 0,
      statusIntervalMs: 10_000,
      // A bystander: it must not move the slot that the connector under test owns.
      canConfirmIdle: () => false,
      onMessage: () => undefined,
    });
    const { done } = await stream.start();
    done.catch(() => undefined);
    const pid = await waitFor('the holder to show in pg_replication_slots', async () => {
      const r = await admin.query(
        'SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active',
        [slotName],
      );
      return r.rows[0]?.active_pid ?? undefined;
    });
    return {
      pid: Number(pid),
      async release() {
        await stream.stop();
      },
    };
  } finally {
    await admin.end();
  }
}

/**
 * Per-test databases for task tests: `database(ddl)` makes a fresh database with
 * `ddl` applied and a client on it; after the test the slot named after the database
 * is dropped (when nothing holds it) and the client closed. `config(db)` is a task
 * config streaming that database from that slot; `newDriver()` a new task (stopped after
 * the test) in its driver, and `run(db)` that driver started on `config(db)`. Call in
 * a describe block.
 */
export function useTaskDatabases(
  cluster: () => PostgresCluster,
  prefix: string,
  options: { client?: Partial<pg.ClientConfig>; config?: Record<string, string> } = {},
) {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });
  const config = (db: string, overrides: Record<string, string> = {}): TaskConfig => {
    const c = cluster();
    return {
      'database.hostname': c.host,
      'database.port': String(c.port),
      'database.user': c.user,
      'database.password': c.password,
      'database.dbname': db,
      'topic.prefix': 'srv',
      'slot.name': db,
      'poll.interval.ms': '50',
      ...options.config,
      ...overrides,
    };
  };
  const newDriver = (offsets = new InMemoryOffsets()): TaskDriver => {
    const task = new PostgresCdcSourceTask();
    cleanups.push(() => Promise.resolve(task.stop()));
    return new TaskDriver(task, offsets);
  };
  return {
    /** Runs after the test, before the databases' own clean-up (last added first). */
    cleanups,
    async database(ddl: string): Promise<{ db: string; sql: pg.Client }> {
      const db = await cluster().freshDatabase(prefix);
      const sql = new pgModule.Client({ ...cluster().connectionConfig(db), ...options.client });
      sql.on('error', () => undefined);
      await sql.connect();
      cleanups.push(async () => {
        await sql
          .query(
            'SELECT pg_drop_replication_slot($1) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
            [db],
          )
          .catch(() => undefined);
        await sql.end();
      });
      await sql.query(ddl);
      return { db, sql };
    },
    config,
    newDriver,
    async run(
      db: string,
      overrides: Record<string, string> = {},
      offsets = new InMemoryOffsets(),
    ): Promise<TaskDriver> {
      const started = newDriver(offsets);
      await started.start(config(db, overrides));
      return started;
    },
  };
}
