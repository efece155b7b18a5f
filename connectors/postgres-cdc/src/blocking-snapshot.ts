/**
 * Blocking snapshots (Debezium 2.5's execute-snapshot signal with type blocking): the
 * stream pauses at the signal, the tables the signal names are read like an initial
 * snapshot (snapshot-reader.ts: op r, source.snapshot first / first_in_data_collection
 * / true / last_in_data_collection / last), and then the stream goes on from the
 * signal, as Debezium's ChangeEventSourceCoordinator.doBlockingSnapshot does.
 *
 * What it reads: data-collections are regular expressions matched whole (case
 * insensitive) against the captured tables' schema.table; the signal table is never
 * read. additional-conditions name a table (matched the same way) and its `filter`:
 * a whole SELECT statement, as Debezium's blocking snapshot takes it (it becomes the
 * table's snapshot.select.statement.overrides for this snapshot), or, beyond Debezium,
 * a bare condition, read as `SELECT * FROM <table> WHERE <filter>`. The configured
 * snapshot.select.statement.overrides and snapshot.include.collection.list do not
 * apply (Debezium's getBlockingSnapshottingTask does not take them either);
 * snapshot.locking.mode, snapshot.max.threads and snapshot.fetch.size do. It reads in a
 * REPEATABLE READ transaction of its own: there is no exported snapshot to meet, the
 * rows are as of some moment after the signal.
 *
 * The pause (the task's side, postgres-cdc-task.ts): from the signal on, whatever the
 * stream still decodes (the signal's own insert, the rest of its socket read) is held
 * back, in order, with its commits, and the socket is paused, so that nothing of the
 * stream passes the snapshot's reads; once they are out, the held records follow and
 * the socket resumes. Changes committed between the signal and the snapshot's start
 * come twice (read, then streamed again), none is lost: at least once.
 *
 * Offsets: every read carries the signal change's offset with lsn_proc one before the
 * signal's, so that a restart from any of them streams the signal again and takes the
 * whole blocking snapshot again (Debezium instead stores it as an interrupted snapshot
 * and snapshots everything again); the signal's own record comes after the reads and
 * ends that. The reads count against the signal's transaction for the slot's
 * confirmation (commit-tracker.ts), since they carry its lsn_commit. A signal of the
 * kafka or file channel is not in the WAL: its reads carry the offset of the last
 * record handed on (plus the channels' positions), so whether a restart in the middle
 * takes that snapshot again is up to the channel's stored position; the stream still
 * loses nothing.
 *
 * Failure: a read that fails (a bad filter, a dropped table) is logged at ERROR and the
 * stream goes on, as in Debezium; the rows read before it were delivered. A second
 * blocking signal while one runs is refused with an error (nothing is run for it).
 *
 * Owner: the task; request() from the signal processor on the event loop, stop() once.
 */
import pg from 'pg';
import type { SourceOffset, SourceRecord } from '../../../src/connect/api/index.ts';
import type { SnapshotReadSettings } from './connector-config.ts';
import type { EventContext } from './event-builder.ts';
import type { Logger } from './logger.ts';
import { QueueClosedError } from './record-queue.ts';
import type { ExecuteSnapshotRequest, SignalPosition } from './signals/signal-processor.ts';
import { isSameTable, qualifiedName } from './signals/signal-table.ts';
import { readSnapshot, type SnapshotProgress, tablesToSnapshot } from './snapshot-reader.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import type { TableSchema } from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import type { MappingModes } from './type-mapping.ts';
import { TypeRegistry } from './type-registry.ts';

export interface BlockingSnapshotOptions {
  connection: pg.ClientConfig;
  fetchSize: number;
  context: EventContext;
  modes: MappingModes;
  filter: TableFilter;
  topicPrefix: string;
  /** The configured snapshot.* keys (locking, threads; include and overrides are not used). */
  settings: SnapshotReadSettings;
  capturedTables(): readonly TableId[];
  signalTable: TableId;
  log: Logger;
  /** Hold the stream back from here on (its records, its commits, its socket). */
  pauseStream(): void;
  /** Let the held part of the stream go, then the socket. */
  resumeStream(): void;
  /** A chunk of reads, awaited (the queue's back-pressure); rejects once the task stops. */
  emit(records: SourceRecord[]): Promise<void>;
  /** The offset a streamed record at `at` would carry (the incremental snapshot's state added). */
  offsetAt(at: SignalPosition): SourceOffset;
  onTable?(table: TableSchema): void;
  onProgress?(p: SnapshotProgress): void;
  onTableDone?(table: TableId): void;
  onStarted?(tables: number): void;
  onEnded?(completed: boolean): void;
  nowMicros(): number;
}

export interface BlockingSnapshotSignals {
  executeBlocking(request: ExecuteSnapshotRequest, at: SignalPosition): void;
}

export class BlockingSnapshot implements BlockingSnapshotSignals {
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(private readonly o: BlockingSnapshotOptions) {}

  /** True from the signal until the held stream is let go. */
  get active(): boolean {
    return this.running !== null;
  }

  executeBlocking(request: ExecuteSnapshotRequest, at: SignalPosition): void {
    if (this.running) {
      this.o.log.error(
        `not supported: execute-snapshot signal '${request.signalId}' of type 'blocking' while another blocking snapshot runs; nothing was done for it, send it again once that one is done`,
      );
      return;
    }
    const tables = tablesToSnapshot(this.o.capturedTables(), request.dataCollections).filter(
      (t) => !isSameTable(t, this.o.signalTable),
    );
    if (tables.length === 0) {
      this.o.log.warn(
        `Blocking snapshot signal '${request.signalId}': no captured table matches ${JSON.stringify(request.dataCollections)}, nothing to snapshot`,
      );
      return;
    }
    this.o.log.info(
      `Requested 'BLOCKING' snapshot of data collections '${tables.map((t) => `${t.schema}.${t.table}`).join(', ')}' (signal '${request.signalId}'): streaming pauses`,
    );
    this.o.pauseStream();
    this.running = this.run(request, tables, at).finally(() => {
      this.running = null;
      if (!this.stopping) this.o.resumeStream();
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async run(
    request: ExecuteSnapshotRequest,
    tables: TableId[],
    at: SignalPosition,
  ): Promise<void> {
    const o = this.o;
    const signalOffset = o.offsetAt(at);
    const proc = Number(signalOffset.lsn_proc ?? at.lsn);
    // One before the signal: a restart from a read streams the signal again (header).
    // A signal of the kafka or file channel sits after the last record handed on (whose
    // offset it has, or none yet): a restart from a read sends that record once more.
    const offset: SourceOffset = {
      ...signalOffset,
      lsn: signalOffset.lsn ?? at.lsn,
      lsn_proc: proc - 1,
    };
    const catalog = new pg.Client({ ...o.connection, options: SESSION_OPTIONS });
    catalog.on('error', () => undefined);
    let completed = false;
    o.onStarted?.(tables.length);
    try {
      await catalog.connect();
      const registry = new TypeRegistry(catalog);
      await registry.load();
      const { rows } = await readSnapshot({
        connection: o.connection,
        snapshotName: null,
        consistentPoint: at.lsn,
        offset,
        tables,
        fetchSize: o.fetchSize,
        context: o.context,
        registry,
        modes: o.modes,
        filter: o.filter,
        topicPrefix: o.topicPrefix,
        emit: (records) => o.emit(records),
        ...(o.onTable ? { onTable: o.onTable } : {}),
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(o.onTableDone ? { onTableDone: o.onTableDone } : {}),
        nowMicros: o.nowMicros,
        settings: {
          ...o.settings,
          include: [],
          delayMs: 0,
          selectOverrides: selectsOf(request, tables, catalog),
        },
        stopping: () => this.stopping,
      });
      completed = true;
      o.log.info(
        `blocking snapshot of signal '${request.signalId}' done: ${rows} rows; streaming resumes`,
      );
    } catch (error) {
      if (error instanceof QueueClosedError || this.stopping) return;
      o.log.error(
        { err: error },
        `blocking snapshot of signal '${request.signalId}' failed: ${error instanceof Error ? error.message : String(error)}; streaming resumes (the rows read before the failure were delivered)`,
      );
    } finally {
      o.onEnded?.(completed);
      await catalog.end().catch(() => undefined);
    }
  }
}

/** additional-conditions as the SELECT each table is read through. */
function selectsOf(
  request: ExecuteSnapshotRequest,
  tables: readonly TableId[],
  sql: pg.Client,
): Map<string, string> {
  const selects = new Map<string, string>();
  for (const { dataCollection, filter } of request.additionalConditions) {
    for (const t of tablesToSnapshot(tables, [dataCollection])) {
      const statement = /^\s*select\s/i.test(filter)
        ? filter
        : `SELECT * FROM ${qualifiedName(t, (n) => sql.escapeIdentifier(n))} WHERE ${filter}`;
      selects.set(`${t.schema}.${t.table}`, statement);
    }
  }
  return selects;
}
