/**
 * The source task: snapshot and/or stream one database into Debezium change events.
 *
 * Lifecycle (see source-task.ts for the runtime's side of the contract):
 *   start   check the database (startup-check.ts), make the publication match the
 *           config, read the stored offset and the slot, and pick a start plan
 *           (start-plan.ts). A snapshot runs in the background: its chunks go into the
 *           queue as room allows, then streaming starts at the slot's consistent point.
 *   poll    drains the queue (at most max.batch.size records), waiting up to
 *           poll.interval.ms when it is empty; returns at once after stop(). Throws
 *           the first fatal error found in the background.
 *   commitRecord  counts the acknowledgement against the record's transaction.
 *   commit  reads back the offset the runtime stored and confirms to Postgres the end
 *           LSN of the last transaction that is fully acknowledged and covered by it
 *           (commit-tracker.ts). Nothing else moves the slot, except idle keepalives
 *           while nothing at all is unconfirmed (replication-stream.ts).
 *   stop    ends the snapshot, the stream, the heartbeat timer and every connection;
 *           drops the slot when slot.drop.on.stop.
 *
 * Offsets: source partition { server: topic.prefix }; offsets as written by the
 * snapshot reader, the change source and heartbeat.ts. Crash behaviour: nothing is
 * kept here; a restart resumes from the stored offset and the slot, re-sending at
 * most what was produced after the last offset commit.
 *
 * Status for the runtime: `metrics()` (phase, retry detail, snapshot progress, slot
 * lag estimated from the stream) and `slotLagBytes()` (exact, asks Postgres).
 */
import pg from 'pg';
import {
  ConnectException,
  parseConfigOrThrow,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
  type SourceTask,
  type SourceTaskContext,
  type TaskConfig,
} from '../../../src/connect/api/index.ts';
import type { CompletedTransaction } from './change-event-source.ts';
import { CommitTracker } from './commit-tracker.ts';
import {
  type PostgresCdcSettings,
  postgresCdcConfigDefs,
  readSettings,
} from './connector-config.ts';
import { CONNECTOR_VERSION, type EventContext } from './event-builder.ts';
import { heartbeatRecord } from './heartbeat.ts';
import { type Logger, pluginLogger } from './logger.ts';
import { formatLsn, type Lsn } from './lsn.ts';
import { ensurePublication } from './publication.ts';
import { QueueClosedError, RecordQueue } from './record-queue.ts';
import {
  checkResume,
  createSlot,
  createSlotExportingSnapshot,
  dropSlotWaiting,
  type ExportedSnapshot,
  readSlot,
} from './replication-slot.ts';
import { readSnapshot, type SnapshotProgress } from './snapshot-reader.ts';
import { parseStoredOffset, planStart, type StartPlan } from './start-plan.ts';
import { checkDatabase, clientConfig } from './startup-check.ts';
import { StreamRunner, type StreamState } from './stream-runner.ts';
import { TableFilter, type TableId } from './table-filter.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import { TypeRegistry } from './type-registry.ts';

export type TaskPhase = 'starting' | 'snapshot' | StreamState | 'idle';

export interface PostgresCdcTaskMetrics {
  phase: TaskPhase;
  /** Why the stream is retrying or failed, when it is. */
  detail: string | null;
  snapshot: SnapshotProgress[];
  /** WAL the server has sent beyond the slot's confirmed LSN, from the stream's own view. */
  slotLagBytes: number;
  confirmedLsn: string;
  pendingTransactions: number;
  queuedRecords: number;
}

/** Reconnect back-off: quick first retry, capped so a long outage is probed twice a minute. */
const BACKOFF = { initialMs: 200, maxMs: 30_000 };
/** Snapshot progress goes to the log at most this often, plus once per table at its end. */
const PROGRESS_LOG_INTERVAL_MS = 10_000;

export class PostgresCdcSourceTask implements SourceTask {
  private s!: PostgresCdcSettings;
  private ctx!: SourceTaskContext;
  private log!: Logger;
  private partition!: SourcePartition;
  private queue!: RecordQueue;
  private readonly tracker = new CommitTracker();
  private runner: StreamRunner | null = null;
  private background: Promise<void> | null = null;
  private exported: ExportedSnapshot | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private failure: Error | null = null;
  private stopping = false;
  private phase: TaskPhase = 'starting';
  private detail: string | null = null;
  private lastOffset: SourceOffset | null = null;
  private readonly progress = new Map<string, SnapshotProgress>();
  private lastProgressLog = 0;

  version(): string {
    return CONNECTOR_VERSION;
  }

  async start(config: TaskConfig, context: SourceTaskContext): Promise<void> {
    this.s = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    this.ctx = context;
    this.partition = { server: this.s.topicPrefix };
    this.log = pluginLogger({ connector: context.connectorName, task: context.taskId });
    this.queue = new RecordQueue(
      this.s.maxQueueSize,
      () => this.runner?.pause(),
      () => this.runner?.resume(),
    );
    const tables = await checkDatabase(this.s);
    const connection = clientConfig(this.s);
    const stored = await context.offsetStorageReader.offset(this.partition);
    const admin = new pg.Client(connection);
    admin.on('error', () => undefined);
    let plan: StartPlan;
    let slotConfirmed: Lsn | null = null;
    try {
      await admin.connect();
      const published = await ensurePublication(
        admin,
        this.s.publicationName,
        this.s.publicationMode,
        tables,
      );
      if (published !== 'unchanged')
        this.log.info({ publication: this.s.publicationName }, `publication ${published}`);
      const slot = await readSlot(admin, this.s.slotName);
      slotConfirmed = slot?.confirmedFlushLsn ?? null;
      plan = planStart(this.s.snapshotMode, parseStoredOffset(stored), (lsn) =>
        checkResume(slot, this.s.slotName, this.s.connection.database, lsn),
      );
      this.log.info({ plan }, `start plan: ${plan.action}`);
      if (plan.action === 'stream-from-slot' && slot === null) {
        slotConfirmed = await createSlot(admin, this.s.slotName);
      }
    } finally {
      await admin.end().catch(() => undefined);
    }
    switch (plan.action) {
      case 'fail':
        throw new ConnectException(plan.error.message, { cause: plan.error });
      case 'idle':
        this.phase = 'idle';
        break;
      case 'stream-from-slot':
        this.startStreaming(slotConfirmed ?? 0, null);
        break;
      case 'resume':
        if (plan.note) this.log.info(plan.note);
        this.lastOffset = stored;
        this.startStreaming(plan.startLsn, plan.resumeAfter);
        break;
      case 'snapshot': {
        this.log.info(`snapshot of ${tables.length} tables: ${plan.reason}`);
        await dropSlotWaiting(connection, this.s.slotName);
        this.exported = await createSlotExportingSnapshot(connection, this.s.slotName);
        this.phase = 'snapshot';
        this.background = this.snapshotThenStream(this.exported, tables, plan.thenStream);
        break;
      }
    }
    if (this.s.heartbeatIntervalMs > 0) {
      this.heartbeatTimer = setInterval(() => this.heartbeat(), this.s.heartbeatIntervalMs);
      this.heartbeatTimer.unref();
    }
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.stopping) return null;
    if (this.failure) throw this.failure;
    const records = await this.queue.take(this.s.maxBatchSize, this.s.pollIntervalMs);
    if (records.length > 0) return records;
    if (this.failure && !this.stopping) throw this.failure;
    return null;
  }

  commitRecord(record: SourceRecord): void {
    this.tracker.acknowledged(record);
  }

  async commit(): Promise<void> {
    const runner = this.runner;
    if (!runner || this.stopping) return;
    const stored = parseStoredOffset(await this.ctx.offsetStorageReader.offset(this.partition));
    const lsn = this.tracker.takeConfirmable(stored);
    if (lsn !== null) runner.confirm(lsn);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    this.queue?.close();
    await this.background?.catch(() => undefined);
    await this.runner?.stop();
    await this.exported?.release();
    if (this.s?.slotDropOnStop) {
      await dropSlotWaiting(clientConfig(this.s), this.s.slotName).catch((e: unknown) =>
        this.log.warn({ err: e }, `could not drop slot ${this.s.slotName}`),
      );
    }
    this.phase = 'stopped';
  }

  metrics(): PostgresCdcTaskMetrics {
    const confirmed = this.runner?.confirmedLsn ?? 0;
    return {
      phase: this.phase,
      detail: this.detail,
      snapshot: [...this.progress.values()],
      slotLagBytes: this.runner ? Math.max(0, this.runner.walEnd - confirmed) : 0,
      confirmedLsn: formatLsn(confirmed),
      pendingTransactions: this.tracker.pending,
      queuedRecords: this.queue?.size ?? 0,
    };
  }

  /** Bytes of WAL the slot holds beyond its confirmed position, asked of Postgres. */
  async slotLagBytes(): Promise<number | null> {
    const client = new pg.Client(clientConfig(this.s));
    client.on('error', () => undefined);
    try {
      await client.connect();
      const r = await client.query(
        `SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint::text AS lag
           FROM pg_replication_slots WHERE slot_name = $1`,
        [this.s.slotName],
      );
      return r.rows[0]?.lag == null ? null : Number(r.rows[0].lag);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private eventContext(): EventContext {
    return {
      serverName: this.s.topicPrefix,
      database: this.s.connection.database,
      tombstonesOnDelete: this.s.tombstonesOnDelete,
      provideTransactionMetadata: this.s.provideTransactionMetadata,
      sourcePartition: this.partition,
      nowMs: () => this.ctx.clock.now(),
    };
  }

  private async snapshotThenStream(
    exported: ExportedSnapshot,
    tables: TableId[],
    thenStream: boolean,
  ): Promise<void> {
    const connection = clientConfig(this.s);
    const catalog = new pg.Client({ ...connection, options: SESSION_OPTIONS });
    catalog.on('error', () => undefined);
    let rows = 0;
    try {
      await catalog.connect();
      const registry = new TypeRegistry(catalog);
      await registry.load();
      ({ rows } = await readSnapshot({
        connection,
        snapshotName: exported.snapshotName,
        consistentPoint: exported.consistentPoint,
        tables,
        fetchSize: this.s.snapshotFetchSize,
        context: this.eventContext(),
        registry,
        modes: this.modes(),
        filter: new TableFilter(this.s.filters),
        topicPrefix: this.s.topicPrefix,
        emit: async (records) => {
          await this.queue.room();
          this.queue.push(records);
        },
        onProgress: (p) => this.onProgress(p),
        nowMicros: () => this.ctx.clock.now() * 1000,
      }));
    } catch (error) {
      if (!(error instanceof QueueClosedError) && !this.stopping)
        this.fail(new ConnectException(`snapshot failed: ${message(error)}`, { cause: error }));
      return;
    } finally {
      await catalog.end().catch(() => undefined);
      await exported.release();
      this.exported = null;
    }
    this.log.info(
      { tables: [...this.progress.values()] },
      `snapshot done: ${rows} rows at ${formatLsn(exported.consistentPoint)}`,
    );
    if (this.stopping) return;
    if (!thenStream) {
      this.phase = 'idle';
      return;
    }
    this.startStreaming(exported.consistentPoint, null);
  }

  private startStreaming(
    startLsn: Lsn,
    resumeAfter: { commitLsn: Lsn; lsnProc: Lsn } | null,
  ): void {
    if (this.stopping) return;
    const runner = new StreamRunner({
      connection: clientConfig(this.s),
      slotName: this.s.slotName,
      publicationName: this.s.publicationName,
      context: this.eventContext(),
      filter: new TableFilter(this.s.filters),
      modes: this.modes(),
      topicPrefix: this.s.topicPrefix,
      skippedOperations: this.s.skippedOperations,
      statusIntervalMs: this.s.statusUpdateIntervalMs,
      startLsn,
      resumeAfter,
      backoff: BACKOFF,
      emit: (records) => {
        this.tracker.emitted(records);
        this.lastOffset = records[records.length - 1].sourceOffset;
        this.queue.push(records);
      },
      onCommit: (tx: CompletedTransaction) => this.tracker.committed(tx),
      canConfirmIdle: () => this.tracker.pending === 0,
      onState: (state, detail) => {
        this.phase = state;
        this.detail = detail ?? null;
        if (state === 'retrying') this.log.warn(`replication stream retrying: ${detail}`);
      },
      onFatal: (e) =>
        this.fail(new ConnectException(`replication stream failed: ${e.message}`, { cause: e })),
    });
    this.runner = runner;
    runner.start();
  }

  private heartbeat(): void {
    const runner = this.runner;
    if (this.stopping || !runner || this.phase !== 'streaming') return;
    this.queue.push([
      heartbeatRecord(
        this.s.topicPrefix,
        this.partition,
        this.lastOffset,
        runner.confirmedLsn,
        this.ctx.clock.now(),
      ),
    ]);
    const query = this.s.heartbeatActionQuery;
    const catalog = runner.catalog;
    if (query && catalog) {
      catalog
        .query(query)
        .catch((e: unknown) =>
          this.log.warn({ err: e }, `heartbeat.action.query failed: ${message(e)}`),
        );
    }
  }

  private onProgress(p: SnapshotProgress): void {
    const key = `${p.table.schema}.${p.table.table}`;
    const isNewTable = !this.progress.has(key);
    this.progress.set(key, p);
    const now = this.ctx.clock.now();
    if (isNewTable || now - this.lastProgressLog >= PROGRESS_LOG_INTERVAL_MS) {
      this.lastProgressLog = now;
      this.log.info(`snapshot of ${key}: ${p.rowsDone} of about ${p.rowsEstimated} rows`);
    }
  }

  private modes() {
    return {
      decimalHandlingMode: this.s.decimalHandlingMode,
      timePrecisionMode: this.s.timePrecisionMode,
    };
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.phase = 'failed';
    this.detail = error.message;
    this.log.error({ err: error }, error.message);
    this.queue.wake();
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
