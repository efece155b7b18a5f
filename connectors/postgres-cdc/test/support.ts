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
import type { SourceRecord } from '../../../src/connect/api/index.ts';
import { ChangeEventSource, type CompletedTransaction } from '../src/change-event-source.ts';
import { ensurePublication } from '../src/publication.ts';
import { createSlotExportingSnapshot, dropSlot } from '../src/replication-slot.ts';
import { TableFilter } from '../src/table-filter.ts';
import { SESSION_OPTIONS } from '../src/text-values.ts';
import type { MappingModes } from '../src/type-mapping.ts';
import { TypeRegistry } from '../src/type-registry.ts';

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
    filter: new TableFilter({
      schemaInclude: [],
      schemaExclude: [],
      tableInclude: [],
      tableExclude: [],
      columnInclude: [],
      columnExclude: [],
    }),
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
      const deadline = new Promise<void>((_, reject) =>
        setTimeout(
          () =>
            reject(
              failure ?? new Error(`only ${transactions.length} of ${n} transactions arrived`),
            ),
          20_000,
        ).unref(),
      );
      if (transactions.length < n)
        await Promise.race([
          new Promise<void>((resolve) => waiters.push({ n, resolve })),
          deadline,
          failed,
        ]);
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
