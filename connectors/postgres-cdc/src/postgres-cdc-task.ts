/**
 * The source task: snapshot and/or stream one database into Debezium change events.
 *
 * Lifecycle (see source-task.ts for the runtime's side of the contract):
 *   start   check the database (startup-check.ts), make the publication match the
 *           config, mark the topics of tables without a key cleanup.policy=delete
 *           (keyless-tables.ts), read the stored offset and the slot, and pick a start
 *           plan (start-plan.ts: which decides too whether an existing slot is this
 *           connector's to replace). For a snapshot the slot is made here, exporting
 *           the snapshot; when another process still holds this connector's old slot,
 *           the background first waits for it within slot.max.retries. The snapshot
 *           runs in the background: its chunks go into the queue as room allows, then
 *           streaming starts at the new slot's consistent point.
 *   poll    drains the queue (at most max.batch.size records), waiting up to
 *           poll.interval.ms when it is empty; returns at once after stop(). Throws
 *           the first fatal error found in the background.
 *           With transaction.boundary=connector (exactly-once workers), it marks each
 *           database transaction's end (transaction-boundaries.ts).
 *   commitRecord  counts the acknowledgement against the record's transaction.
 *   commit  reads back the offset the runtime stored and confirms to Postgres the end
 *           LSN of the last transaction that is fully acknowledged and covered by it
 *           (commit-tracker.ts). Nothing else moves the slot, except idle keepalives
 *           while nothing at all is unconfirmed (replication-stream.ts).
 *   stop    ends the snapshot, the stream, the heartbeat timer and every connection;
 *           drops the slot (waiting a bounded time for it to be released) when
 *           slot.drop.on.stop, or when this task made it for a first snapshot and handed
 *           nothing on from it, so no offset will ever show it is this connector's.
 *
 * Offsets: source partition { server: topic.prefix }; offsets as written by the
 * snapshot reader, the change source and heartbeat.ts, plus the kafka signal channel's
 * position once it has one (signals/kafka-signal-channel.ts). Crash behaviour: nothing is
 * kept here; a restart resumes from the stored offset and the slot, re-sending at
 * most what was produced after the last offset commit.
 *
 * Status for the runtime: while the task waits for its slot or retries a lost stream it
 * stays RUNNING and says why through `context.reportTrouble` (what failed, retry n of
 * m, the holder, the WAL the slot retains), cleared once it streams again; after its
 * retry budget (slot.max.retries, errors.max.retries) it fails. `metrics()` keeps the
 * same detail with the phase, snapshot progress and slot lag; `slotLagBytes()` asks
 * Postgres. Debezium's snapshot and streaming metrics go to the worker's /metrics
 * through `context.pluginMetrics()` (debezium-metrics.ts), read from this task's
 * fields when scraped.
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
  Wakeup,
} from '../../../src/connect/api/index.ts';
import { BlockingSnapshot } from './blocking-snapshot.ts';
import type { CompletedTransaction, ObservedChange, ResumePoint } from './change-event-source.ts';
import { CommitTracker } from './commit-tracker.ts';
import {
  mappingModes,
  type PostgresCdcSettings,
  postgresCdcConfigDefs,
  readSettings,
} from './connector-config.ts';
import {
  type RowsScannedSeries,
  registerDebeziumMetrics,
  SnapshotMeter,
  StreamingMeter,
} from './debezium-metrics.ts';
import { CONNECTOR_VERSION, type EventContext } from './event-builder.ts';
import { heartbeatRecord } from './heartbeat.ts';
import { IncrementalSnapshot } from './incremental-snapshot.ts';
import { COLLECTIONS, withoutState } from './incremental-snapshot-offsets.ts';
import { explicitCompaction, keylessCompactedError } from './keyless-tables.ts';
import { type Logger, pluginLogger } from './logger.ts';
import { MessagePrefixFilter } from './logical-decoding-message.ts';
import { formatLsn, type Lsn } from './lsn.ts';
import { ensurePublication, publicationExists, publishedTables } from './publication.ts';
import { QueueClosedError, RecordQueue } from './record-queue.ts';
import {
  checkResume,
  createSlot,
  createSlotExportingSnapshot,
  dropSlotWhenInactive,
  type ExportedSnapshot,
  readSlot,
} from './replication-slot.ts';
import { ExternalSignals, type SignalChannelReader } from './signals/external-signals.ts';
import { FileSignalChannel } from './signals/file-signal-channel.ts';
import { KafkaSignalChannel } from './signals/kafka-signal-channel.ts';
import {
  type SignalPosition,
  SignalProcessor,
  WINDOW_CLOSE,
  WINDOW_OPEN,
} from './signals/signal-processor.ts';
import {
  FilterWithSignalTable,
  isSameTable,
  type SignalRecord,
  signalOf,
} from './signals/signal-table.ts';
import { inspectSlotOnce, type SlotUsage } from './slot-usage.ts';
import { readSnapshot, type SnapshotProgress } from './snapshot-reader.ts';
import { dropOwnSlot, waitForOwnSlot } from './snapshot-slot.ts';
import { parseStoredOffset, planStart, type StartPlan } from './start-plan.ts';
import { checkDatabase, clientConfig } from './startup-check.ts';
import { StreamRunner, type StreamState } from './stream-runner.ts';
import { TableFilter, type TableId } from './table-filter.ts';
import type { TableSchema } from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import { DatabaseTransactionBoundaries } from './transaction-boundaries.ts';
import type { MappingModes } from './type-mapping.ts';
import { TypeRegistry } from './type-registry.ts';

export type TaskPhase = 'starting' | 'snapshot' | StreamState | 'idle';

export interface PostgresCdcTaskMetrics {
  phase: TaskPhase;
  /** Why the task is retrying (as reported through reportTrouble) or failed, when it is. */
  detail: string | null;
  snapshot: SnapshotProgress[];
  /**
   * WAL beyond the slot's confirmed LSN. While streaming, from the stream's own view
   * (what the server sent, minus what was confirmed); otherwise (waiting for the slot,
   * retrying, failed) as Postgres answered at the last retry, since a stream that is
   * down sees nothing of the WAL written meanwhile.
   */
  slotLagBytes: number;
  /** WAL the server keeps for the slot (from restart_lsn), as of the last retry; null before any. */
  retainedWalBytes: number | null;
  confirmedLsn: string;
  pendingTransactions: number;
  queuedRecords: number;
}

/** Reconnect back-off: quick first retry, capped so a long outage is probed twice a minute. */
const BACKOFF = { initialMs: 200, maxMs: 30_000 };
/**
 * How long a retry waits to ask Postgres about the slot for its detail: the server may
 * be the thing that is down, and the detail must not hold the retry up for long.
 */
const INSPECT_TIMEOUT_MS = 2_000;
/**
 * slot.drop.on.stop: how long stop() waits for the slot to be released. Our own stream
 * has ended by then; its walsender exits within moments of the connection closing.
 */
const SLOT_RELEASE_TIMEOUT_MS = 10_000;
/** Postgres truncates application_name to NAMEDATALEN - 1 bytes. */
const APPLICATION_NAME_MAX = 63;
const DELETE_POLICY = { 'cleanup.policy': 'delete' } as const;
/** Snapshot progress goes to the log at most this often, plus once per table at its end. */
const PROGRESS_LOG_INTERVAL_MS = 10_000;

export class PostgresCdcSourceTask implements SourceTask {
  private s!: PostgresCdcSettings;
  private ctx!: SourceTaskContext;
  private log!: Logger;
  private partition!: SourcePartition;
  private queue!: RecordQueue;
  private readonly tracker = new CommitTracker();
  /** Set when the runtime lets the task end transactions (transaction.boundary=connector). */
  private boundaries: DatabaseTransactionBoundaries | null = null;
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
  /** The slot as last asked of Postgres while waiting for it (the runner keeps its own). */
  private slotUsage: SlotUsage | null = null;
  /** Interrupts the wait between attempts to replace a held slot. */
  private readonly slotWait = new Wakeup();
  /** Whether this task created the slot (for a snapshot), and whether it handed on any record. */
  private createdSlot = false;
  private handedOn = false;
  /** The offset stored when the task started: none means no record ever named the slot. */
  private storedAtStart: SourceOffset | null = null;
  /** Topics already marked cleanup.policy=delete (tables without a key). */
  private readonly keylessTopics = new Set<string>();
  /** Debezium's snapshot and streaming metrics (debezium-metrics.ts). */
  private readonly snapshotMeter = new SnapshotMeter();
  private readonly streamingMeter = new StreamingMeter();
  private readonly rowsScannedTables = new Set<string>();
  private addRowsScanned: RowsScannedSeries = () => undefined;
  /** With signal.data.collection: the source signal channel and incremental snapshots. */
  private incremental: IncrementalSnapshot | null = null;
  private signals: SignalProcessor | null = null;
  /** The captured tables found at start (what execute-snapshot's data-collections match). */
  private captured: TableId[] = [];
  /** The kafka and file signal channels, when signal.enabled.channels names them. */
  private externalSignals: ExternalSignals | null = null;
  private kafkaSignals: KafkaSignalChannel | null = null;
  /** Blocking snapshots (blocking-snapshot.ts), with signal.data.collection. */
  private blocking: BlockingSnapshot | null = null;
  /** While a blocking snapshot runs: the stream's emits and commits, held in order. */
  private held: Array<() => void> | null = null;
  /** Whether the queue asked the stream to pause (it is full). */
  private queueFull = false;

  version(): string {
    return CONNECTOR_VERSION;
  }

  async start(config: TaskConfig, context: SourceTaskContext): Promise<void> {
    this.s = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    this.ctx = context;
    if (context.transactionContext)
      this.boundaries = new DatabaseTransactionBoundaries(
        context.transactionContext,
        this.s.maxBatchSize,
      );
    this.partition = { server: this.s.topicPrefix };
    this.log = pluginLogger({ connector: context.connectorName, task: context.taskId });
    this.s.names.topics.onSanitized = (proposed, topic) =>
      this.log.warn(`topic '${proposed}' is not a valid topic name, replacing it with '${topic}'`);
    this.addRowsScanned = registerDebeziumMetrics(context.pluginMetrics(), {
      topicPrefix: this.s.topicPrefix,
      snapshot: this.snapshotMeter,
      streaming: this.streamingMeter,
      connected: () => this.phase === 'streaming',
      slotLagBytes: () => this.slotLag(),
      now: () => context.clock.now(),
    });
    this.queue = new RecordQueue(
      this.s.maxQueueSize,
      () => {
        this.queueFull = true;
        this.runner?.pause();
      },
      () => {
        this.queueFull = false;
        // A blocking snapshot holds the stream back until it is done.
        if (this.held === null) this.runner?.resume();
      },
    );
    const { tables, keyless } = await checkDatabase(this.s);
    this.captured = tables;
    const connection = this.connection();
    const stored = await context.offsetStorageReader.offset(this.partition);
    const storedPosition = parseStoredOffset(stored);
    this.storedAtStart = stored;
    const admin = new pg.Client(connection);
    admin.on('error', () => undefined);
    let plan: StartPlan;
    let slotConfirmed: Lsn | null = null;
    /** Tables a config change added to the capture (snapshotted incrementally on resume). */
    let addedTables: TableId[] = [];
    try {
      await admin.connect();
      const signalTable = this.s.signalTable;
      if (signalTable) {
        await this.checkSignalTable(admin, signalTable);
        addedTables = await this.tablesNewToPublication(admin, tables, storedPosition !== null);
      }
      const published = await ensurePublication(
        admin,
        this.s.publicationName,
        this.s.publicationMode,
        // Debezium requires the signal table in the publication, captured or not.
        signalTable && !tables.some((t) => isSameTable(t, signalTable))
          ? [...tables, signalTable]
          : tables,
        this.s.publishViaPartitionRoot,
      );
      if (published !== 'unchanged')
        this.log.info({ publication: this.s.publicationName }, `publication ${published}`);
      // Before anything can be polled: the runtime creates a topic at its first record.
      for (const id of keyless) this.markKeyless(id, this.s.names.topics.dataChangeTopic(id));
      const slot = await readSlot(admin, this.s.slotName);
      slotConfirmed = slot?.confirmedFlushLsn ?? null;
      plan = planStart(
        this.s.snapshotMode,
        storedPosition,
        {
          name: this.s.slotName,
          usage: slot?.usage ?? null,
          checkResume: (lsn) => checkResume(slot, this.s.slotName, this.s.connection.database, lsn),
        },
        this.s.snapshotConfigurationBased,
      );
      this.log.info({ plan }, `start plan: ${plan.action}`);
      if (plan.action === 'stream-from-slot' && slot === null) {
        slotConfirmed = await createSlot(admin, this.s.slotName);
      }
    } finally {
      await admin.end().catch(() => undefined);
    }
    this.setUpSignals(plan.action === 'resume' ? stored : null);
    this.setUpSignalChannels(stored);
    if (plan.action === 'resume' && addedTables.length > 0) this.snapshotAdded(addedTables);
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
        if (storedPosition?.kind === 'snapshot-interrupted')
          this.log.warn(
            'the snapshot a crash interrupted is taken again from its start: the rows it had already delivered are delivered once more, exactly-once or not',
          );
        // Slot made here when nothing holds the old one, so that changes committed once
        // start() returned are streamed rather than read by the snapshot.
        const held = plan.replaceSlot
          ? await dropOwnSlot(connection, this.s.slotName, this.log)
          : null;
        if (held === null) await this.createSnapshotSlot();
        this.phase = held === null ? 'snapshot' : 'retrying';
        this.background = this.snapshotThenStream(tables, held, plan.thenStream);
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
    if (this.boundaries?.endPending()) return null;
    const records = await this.queue.take(this.s.maxBatchSize, this.s.pollIntervalMs);
    if (records.length > 0) {
      this.boundaries?.mark(records);
      return records;
    }
    if (this.failure && !this.stopping) throw this.failure;
    return null;
  }

  commitRecord(record: SourceRecord): void {
    this.tracker.acknowledged(record);
  }

  async commit(): Promise<void> {
    const runner = this.runner;
    // After a failure records were dropped (emit below): nothing more may be confirmed.
    if (!runner || this.stopping || this.failure) return;
    const raw = await this.ctx.offsetStorageReader.offset(this.partition);
    this.kafkaSignals?.stored(raw);
    const stored = parseStoredOffset(raw);
    const lsn = this.tracker.takeConfirmable(stored);
    if (lsn !== null) runner.confirm(lsn);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    this.slotWait.wake();
    this.queue?.close();
    await this.background?.catch(() => undefined);
    await this.externalSignals?.stop();
    await this.incremental?.stop();
    await this.blocking?.stop();
    await this.runner?.stop();
    await this.exported?.release();
    // A slot this task made for a first snapshot, with no record handed on from it (the
    // snapshot failed or was stopped before its first row, or every table was empty and
    // nothing changed since): no offset can ever name it, so the next start could not
    // tell it from someone else's slot and would refuse it (start-plan.ts). Dropping it
    // loses nothing: that start takes the snapshot again.
    const unclaimed = this.createdSlot && this.storedAtStart === null && !this.handedOn;
    if (this.s?.slotDropOnStop || unclaimed) {
      await dropSlotWhenInactive(
        clientConfig(this.s),
        this.s.slotName,
        SLOT_RELEASE_TIMEOUT_MS,
      ).catch((e: unknown) => this.log.warn({ err: e }, `could not drop slot ${this.s.slotName}`));
    }
    this.phase = 'stopped';
  }

  metrics(): PostgresCdcTaskMetrics {
    const runner = this.runner;
    const confirmed = runner?.confirmedLsn ?? 0;
    const asked = runner?.lastUsage ?? this.slotUsage;
    return {
      phase: this.phase,
      detail: this.detail,
      snapshot: [...this.progress.values()],
      slotLagBytes: this.slotLag(),
      retainedWalBytes: asked?.retainedBytes ?? null,
      confirmedLsn: formatLsn(confirmed),
      pendingTransactions: this.tracker.pending,
      queuedRecords: this.queue?.size ?? 0,
    };
  }

  /** metrics().slotLagBytes: the stream's view while streaming, else Postgres' last answer. */
  private slotLag(): number {
    const runner = this.runner;
    const streamView = runner ? Math.max(0, runner.walEnd - runner.confirmedLsn) : 0;
    const asked = runner?.lastUsage ?? this.slotUsage;
    return this.phase === 'streaming' || asked?.lagBytes == null ? streamView : asked.lagBytes;
  }

  /** Bytes of WAL the slot holds beyond its confirmed position, asked of Postgres. */
  async slotLagBytes(): Promise<number | null> {
    const usage = await inspectSlotOnce(clientConfig(this.s), this.s.slotName, INSPECT_TIMEOUT_MS);
    return usage?.lagBytes ?? null;
  }

  private eventContext(): EventContext {
    return {
      serverName: this.s.topicPrefix,
      database: this.s.connection.database,
      tombstonesOnDelete: this.s.tombstonesOnDelete,
      provideTransactionMetadata: this.s.provideTransactionMetadata,
      transactionTopic: this.s.names.topics.transactionTopic(),
      sourcePartition: this.partition,
      nowMs: () => this.ctx.clock.now(),
    };
  }

  private async createSnapshotSlot(): Promise<ExportedSnapshot> {
    this.exported = await createSlotExportingSnapshot(this.connection(), this.s.slotName);
    this.createdSlot = true;
    return this.exported;
  }

  /** The snapshot's slot once the holder of the old one let go; null when stopped meanwhile. */
  private async slotAfterHolder(held: SlotUsage): Promise<ExportedSnapshot | null> {
    const gone = await waitForOwnSlot(held, {
      connection: this.connection(),
      slotName: this.s.slotName,
      maxRetries: this.s.slotMaxRetries,
      delayMs: this.s.slotRetryDelayMs,
      log: this.log,
      report: (detail, usage) => {
        this.slotUsage = usage;
        this.trouble(detail);
      },
      wait: (ms) => this.slotWait.wait(ms),
      stopping: () => this.stopping,
    });
    if (!gone) return null;
    const exported = await this.createSnapshotSlot();
    this.phase = 'snapshot';
    this.trouble(null);
    return exported;
  }

  private async snapshotThenStream(
    tables: TableId[],
    held: SlotUsage | null,
    thenStream: boolean,
  ): Promise<void> {
    let exported: ExportedSnapshot | null;
    try {
      exported = held === null ? this.exported : await this.slotAfterHolder(held);
    } catch (error) {
      if (!this.stopping) this.fail(new ConnectException(message(error), { cause: error }));
      return;
    }
    if (exported === null || this.stopping) {
      await exported?.release();
      this.exported = null;
      return;
    }
    const connection = this.connection();
    const catalog = new pg.Client({ ...connection, options: SESSION_OPTIONS });
    catalog.on('error', () => undefined);
    let rows = 0;
    this.snapshotMeter.started(tables.length, this.ctx.clock.now());
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
          // Nothing more is handed on once the task failed (a table it refused).
          if (this.failure) throw this.failure;
          this.handedOn = true;
          this.queue.push(records);
        },
        onTable: (table) => this.onTable(table),
        onProgress: (p) => this.onProgress(p),
        onTableDone: (id) => this.onTableDone(id),
        nowMicros: () => this.ctx.clock.now() * 1000,
        settings: this.s.snapshot,
        stopping: () => this.stopping,
      }));
    } catch (error) {
      this.snapshotMeter.ended(false, this.ctx.clock.now());
      if (!(error instanceof QueueClosedError) && !this.stopping)
        this.fail(new ConnectException(`snapshot failed: ${message(error)}`, { cause: error }));
      return;
    } finally {
      await catalog.end().catch(() => undefined);
      await exported.release();
      this.exported = null;
    }
    this.snapshotMeter.ended(true, this.ctx.clock.now());
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

  private startStreaming(startLsn: Lsn, resumeAfter: ResumePoint | null): void {
    if (this.stopping) return;
    const runner = new StreamRunner({
      connection: this.connection(),
      slotName: this.s.slotName,
      publicationName: this.s.publicationName,
      context: this.eventContext(),
      filter: this.s.signalTable
        ? new FilterWithSignalTable(new TableFilter(this.s.filters), this.s.signalTable)
        : new TableFilter(this.s.filters),
      modes: this.modes(),
      topicPrefix: this.s.topicPrefix,
      skippedOperations: this.s.skippedOperations,
      statusIntervalMs: this.s.statusUpdateIntervalMs,
      startLsn,
      resumeAfter,
      backoff: BACKOFF,
      slotRetry: { maxRetries: this.s.slotMaxRetries, delayMs: this.s.slotRetryDelayMs },
      errorsMaxRetries: this.s.errorsMaxRetries,
      startDelayMs: this.s.streamingDelayMs,
      inspectSlot: () => inspectSlotOnce(clientConfig(this.s), this.s.slotName, INSPECT_TIMEOUT_MS),
      onTable: (table) => this.onTable(table),
      ...(this.signals ? { onChange: (change) => this.onChange(change) } : {}),
      emit: (emitted) => {
        if (this.failure) return;
        const records = this.withTaskState(emitted);
        if (this.held) {
          this.held.push(() => this.handOnStreamed(records));
          return;
        }
        this.handOnStreamed(records);
      },
      events: this.streamingMeter.events,
      messageFilter: new MessagePrefixFilter(this.s.messagePrefixes),
      onCommit: (tx: CompletedTransaction) => {
        if (this.held) this.held.push(() => this.committed(tx));
        else this.committed(tx);
      },
      canConfirmIdle: () => this.tracker.pending === 0 && this.failure === null,
      onIdleKeepalive: (walEnd) => this.releaseIdle(walEnd),
      onState: (state, detail) => {
        if (this.failure) return;
        this.phase = state;
        if (state === 'retrying') {
          this.log.warn(`replication stream retrying: ${detail}`);
          this.trouble(detail ?? null);
        } else if (state === 'streaming') {
          this.trouble(null);
        }
      },
      onFatal: (e) =>
        this.fail(new ConnectException(`replication stream failed: ${e.message}`, { cause: e })),
    });
    this.runner = runner;
    runner.start();
    this.incremental?.start();
    this.externalSignals?.start();
  }

  /** A streamed change's records, handed on (after a blocking snapshot's reads, if one ran). */
  private handOnStreamed(records: SourceRecord[]): void {
    if (this.failure) return;
    this.tracker.emitted(records);
    this.lastOffset = records[records.length - 1].sourceOffset;
    this.handedOn = true;
    this.queue.push(records);
  }

  private committed(tx: CompletedTransaction): void {
    if (this.failure) return;
    // A non-transactional message is no transaction for Debezium's metrics.
    if (!tx.message)
      this.streamingMeter.transactionCommitted(
        tx.xid,
        tx.commitTimeMicros ?? 0,
        this.ctx.clock.now(),
      );
    this.tracker.committed(tx);
    this.boundaries?.committed(tx.commitLsn);
  }

  /** The signal processor and incremental snapshots, resumed from `stored` when it holds one. */
  private setUpSignals(stored: SourceOffset | null): void {
    const signalTable = this.s.signalTable;
    if (!signalTable) return;
    this.incremental = new IncrementalSnapshot({
      connection: this.connection(),
      signalTable,
      chunkSize: this.s.incrementalChunkSize,
      watermarking: this.s.watermarking,
      readOnly: this.s.readOnly,
      requestKeepalive: () => this.runner?.requestKeepalive(),
      context: this.eventContext(),
      modes: this.modes(),
      filter: new TableFilter(this.s.filters),
      topicPrefix: this.s.topicPrefix,
      capturedTables: () => this.captured,
      log: this.log,
      onTable: (table) => this.onTable(table),
      onFatal: (e) =>
        this.fail(new ConnectException(`incremental snapshot failed: ${e.message}`, { cause: e })),
    });
    this.incremental.restore(stored);
    this.blocking = this.blockingSnapshot(signalTable);
    this.signals = new SignalProcessor(this.log, this.incremental, this.blocking);
  }

  private blockingSnapshot(signalTable: TableId): BlockingSnapshot {
    return new BlockingSnapshot({
      connection: this.connection(),
      fetchSize: this.s.snapshotFetchSize,
      context: this.eventContext(),
      modes: this.modes(),
      filter: new TableFilter(this.s.filters),
      topicPrefix: this.s.topicPrefix,
      settings: this.s.snapshot,
      capturedTables: () => this.captured,
      signalTable,
      log: this.log,
      pauseStream: () => {
        this.held ??= [];
        this.runner?.pause();
      },
      resumeStream: () => {
        const held = this.held ?? [];
        this.held = null;
        for (const f of held) f();
        if (!this.queueFull) this.runner?.resume();
      },
      emit: async (records) => {
        await this.queue.room();
        if (this.failure) throw this.failure;
        // Counted with the signal's transaction, whose lsn_commit they carry.
        this.tracker.emitted(records);
        this.handedOn = true;
        this.queue.push(records);
      },
      // The state as it is now; a stale one in the stream's last offset goes.
      // Its reads repeat the signal on restart: they carry its transaction's counts
      // before it, as the change event source's repeating records do.
      offsetAt: (at) => withState({ ...withoutState(at.offset), ...at.counts }, this.taskState()),
      onTable: (table) => this.onTable(table),
      onProgress: (p) => this.onProgress(p),
      onTableDone: (id) => this.onTableDone(id),
      onStarted: (tables) => this.snapshotMeter.started(tables, this.ctx.clock.now()),
      onEnded: (completed) => this.snapshotMeter.ended(completed, this.ctx.clock.now()),
      nowMicros: () => this.ctx.clock.now() * 1000,
    });
  }

  /** Every streamed change: the incremental snapshot's deduplication, then signals. */
  private onChange(change: ObservedChange): SourceRecord[] | undefined {
    // A change that does not go out must not drop a read: its key would vanish.
    if (!change.skipped) this.incremental?.observe(change.table.id, change.records, change.txId);
    // Read-only chunks whose position this change's transaction is past go out before it.
    const passed = this.incremental?.streamPassed(
      Number(change.offset.lsn_commit ?? change.lsn),
      change,
    );
    const signalled = this.signalled(change);
    if (!passed || passed.length === 0) return signalled;
    return signalled && signalled.length > 0 ? [...passed, ...signalled] : passed;
  }

  /**
   * Read-only incremental snapshots on a quiet stream: a keepalive between transactions
   * says how far the server has decoded; chunks whose position that passes go out here,
   * after everything streamed so far, with its offset (as a heartbeat has it).
   */
  private releaseIdle(walEnd: number): void {
    const runner = this.runner;
    if (!this.incremental || !runner || this.stopping || this.failure || this.held) return;
    if (this.phase !== 'streaming') return;
    const base = withoutState(this.heartbeatOf(runner).sourceOffset);
    const proc = typeof base.lsn_proc === 'number' ? base.lsn_proc : Number(base.lsn);
    // release() gives the reads lsn_proc = lsn - 1: here the last record's own.
    const at = {
      offset: base,
      lsn: proc + 1,
      txId: null,
      commitTimeMicros: this.ctx.clock.now() * 1000,
    };
    const reads = this.incremental.streamPassed(walEnd, at);
    if (reads.length === 0) return;
    const records = this.withTaskState(reads);
    this.handedOn = true;
    this.lastOffset = records[records.length - 1].sourceOffset;
    this.queue.push(records);
  }

  /** A change of the signal table: what its signal (or watermark) makes go out before it. */
  private signalled(change: ObservedChange): SourceRecord[] | undefined {
    const signalTable = this.s.signalTable;
    if (!signalTable || !isSameTable(change.table.id, signalTable)) return;
    if (change.op === 'd') return this.closedByDelete(change);
    if (change.op !== 'c') return;
    const signal = signalOf(change.records[change.records.length - 1]);
    if (signal && !this.s.signalChannels.enabled.has('source') && !isWatermark(signal)) {
      this.log.info(
        `signal '${signal.id}' inserted into the signal table is not acted on: signal.enabled.channels does not name the source channel`,
      );
      return;
    }
    return signal ? this.signals?.process(signal, change) : undefined;
  }

  /**
   * incremental.snapshot.watermarking.strategy=insert_delete: the delete of a chunk's
   * open row from the signal table is its close (incremental-snapshot.ts).
   */
  private closedByDelete(change: ObservedChange): SourceRecord[] | undefined {
    if (this.s.watermarking !== 'insert_delete') return;
    const before = (change.records[0]?.value as { before?: Record<string, unknown> } | null)
      ?.before;
    const id = before ? Object.values(before)[0] : undefined;
    if (typeof id !== 'string' || !id.endsWith('-open')) return;
    const close = { id: `${id.slice(0, -'-open'.length)}-close`, type: WINDOW_CLOSE, data: '{}' };
    return this.signals?.process(close, change);
  }

  /**
   * The kafka and file channels (signals/external-signals.ts), read once streaming
   * starts; the kafka one resumes from the position `stored` holds, whatever the start
   * plan (a new snapshot does not make signals already handled new again).
   */
  private setUpSignalChannels(stored: SourceOffset | null): void {
    const settings = this.s.signalChannels;
    if (!this.signals) return;
    const channels: SignalChannelReader[] = [];
    if (settings.enabled.has('kafka')) {
      const bootstrap = settings.kafka.bootstrapServers ?? this.ctx.bootstrapServers;
      if (!bootstrap || bootstrap.length === 0)
        throw new ConnectException(
          "signal.enabled.channels names kafka, but the worker's bootstrap.servers is not known to the task: set signal.kafka.bootstrap.servers",
        );
      this.kafkaSignals = new KafkaSignalChannel({
        settings: settings.kafka,
        bootstrapServers: bootstrap,
        topicPrefix: this.s.topicPrefix,
        clientId: `${this.ctx.connectorName}-signal-${this.ctx.taskId}`,
        stored,
        log: this.log,
      });
      channels.push(this.kafkaSignals);
    }
    if (settings.enabled.has('file')) channels.push(new FileSignalChannel(settings.file, this.log));
    if (channels.length === 0) return;
    this.externalSignals = new ExternalSignals({
      channels,
      intervalMs: settings.pollIntervalMs,
      log: this.log,
      handle: (signal, channel) => this.onExternalSignal(signal, channel),
    });
  }

  /** A signal of the kafka or file channel, acted on where the stream is now. */
  private onExternalSignal(signal: SignalRecord, channel: string): void {
    if (this.failure || this.stopping) return;
    if (isWatermark(signal)) {
      this.log.warn(
        `signal '${signal.id}' of type '${signal.type}' from the ${channel} channel is not acted on: incremental snapshot watermarks count only in the signal table`,
      );
      return;
    }
    const offset = this.lastOffset ?? {};
    const lsn = typeof offset.lsn === 'number' ? offset.lsn : (this.runner?.confirmedLsn ?? 0);
    const at: SignalPosition = { offset, lsn, txId: null, commitTimeMicros: 0 };
    const released = this.signals?.process(signal, at) ?? [];
    // Only a window close releases records, and those come from the signal table only.
    if (released.length > 0)
      this.fail(
        new ConnectException(`invariant: ${channel} signal '${signal.id}' released records`),
      );
    // Heartbeats carry the channel's position from now on too.
    const fields = this.kafkaSignals?.offsetFields();
    if (fields && this.lastOffset) this.lastOffset = { ...this.lastOffset, ...fields };
  }

  /**
   * The task's own offset fields as they are now: the incremental snapshot's state
   * while one is under way, and the kafka signal channel's position once it has one
   * (kafka-signal-channel.ts). Records and heartbeats carry them (withState).
   */
  private taskState(): TaskState {
    return {
      snapshot: this.incremental?.offsetFields(),
      signals: this.kafkaSignals?.offsetFields(),
    };
  }

  /** Streamed records with the task's own state in their offsets, in one copy. */
  private withTaskState(records: SourceRecord[]): SourceRecord[] {
    const state = this.taskState();
    if (!state.snapshot && !state.signals) return records;
    return records.map((r) => {
      const offset = withState(r.sourceOffset, state);
      return offset === r.sourceOffset ? r : { ...r, sourceOffset: offset };
    });
  }

  /**
   * Captured tables the publication does not hold yet, when it is this connector's to
   * manage (filtered) and the task resumes from an offset: a config change added them to
   * the include lists. Empty otherwise (all_tables and disabled publications tell nothing).
   */
  private async tablesNewToPublication(
    admin: pg.Client,
    tables: TableId[],
    resuming: boolean,
  ): Promise<TableId[]> {
    const signalTable = this.s.signalTable;
    if (!resuming || !signalTable || this.s.publicationMode !== 'filtered') return [];
    if (!(await publicationExists(admin, this.s.publicationName))) return [];
    const published = await publishedTables(admin, this.s.publicationName);
    return tables.filter(
      (t) => !isSameTable(t, signalTable) && !published.some((p) => isSameTable(p, t)),
    );
  }

  /**
   * Beyond Debezium: tables added to the capture by a config change are snapshotted
   * incrementally, by themselves, as if an execute-snapshot signal named them; their
   * changes stream from the publication change on.
   */
  private snapshotAdded(tables: TableId[]): void {
    const names = tables.map((t) => `${t.schema}.${t.table}`);
    this.log.info(`tables added to the capture, snapshotted incrementally: ${names.join(', ')}`);
    this.incremental?.execute({
      signalId: 'table.include.list',
      dataCollections: names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      additionalConditions: [],
    });
  }

  /** The signal table must exist, with at least the id, type and data columns Debezium reads. */
  private async checkSignalTable(admin: pg.Client, id: TableId): Promise<void> {
    const r = await admin.query(
      `SELECT count(*)::int AS n FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped`,
      [id.schema, id.table],
    );
    const columns = Number(r.rows[0]?.n ?? 0);
    if (columns === 0)
      throw new ConnectException(
        `Signal data collection '${id.schema}.${id.table}' (signal.data.collection) was not found in the database: ` +
          `create it (CREATE TABLE ${id.schema}.${id.table} (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048)))`,
      );
    if (columns < 3)
      throw new ConnectException(
        `Signal data collection '${id.schema}.${id.table}' has ${columns} columns; it needs id, type and data`,
      );
  }

  /** A heartbeat record at the stream's place now. */
  private heartbeatOf(runner: StreamRunner): SourceRecord {
    return heartbeatRecord(
      this.s.names.topics.heartbeatTopic(),
      this.s.topicPrefix,
      this.partition,
      this.lastOffset,
      runner.confirmedLsn,
      this.ctx.clock.now(),
    );
  }

  private heartbeat(): void {
    const runner = this.runner;
    // While a blocking snapshot holds the stream, the last offset is from before its signal.
    if (this.stopping || !runner || this.phase !== 'streaming' || this.held) return;
    this.handedOn = true;
    const beat = this.heartbeatOf(runner);
    // A heartbeat can be the first offset past a signal that emitted nothing (one of the
    // kafka channel, whose position it carries): it carries the task's state as it is
    // now, not as of the last record, or a restart from it would pass over the signal
    // and forget the snapshot it started.
    const offset = withState(withoutState(beat.sourceOffset), this.taskState());
    this.queue.push([{ ...beat, sourceOffset: offset }]);
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
    if (isNewTable) this.rowsScannedSeries(key);
    const now = this.ctx.clock.now();
    if (isNewTable || now - this.lastProgressLog >= PROGRESS_LOG_INTERVAL_MS) {
      this.lastProgressLog = now;
      this.log.info(`snapshot of ${key}: ${p.rowsDone} of about ${p.rowsEstimated} rows`);
    }
  }

  /** A table the snapshot finished (an empty one reports no progress: its series shows 0). */
  private onTableDone(id: TableId): void {
    this.snapshotMeter.tableDone();
    this.rowsScannedSeries(`${id.schema}.${id.table}`);
  }

  private rowsScannedSeries(key: string): void {
    if (this.rowsScannedTables.has(key)) return;
    this.rowsScannedTables.add(key);
    this.addRowsScanned(key, () => this.progress.get(key)?.rowsDone ?? 0);
  }

  /** The task's connections, named so pg_stat_activity (and a refused holder's message) tells whose they are. */
  private connection(): pg.ClientConfig {
    const name = `${this.ctx.connectorName} (postgres-cdc task ${this.ctx.taskId})`;
    return { ...clientConfig(this.s), application_name: name.slice(0, APPLICATION_NAME_MAX) };
  }

  /** Report (or clear) what keeps the task from streaming; metrics() shows it too. */
  private trouble(detail: string | null): void {
    if (this.failure) return;
    this.detail = detail;
    this.ctx.reportTrouble(detail);
  }

  /** A table schema the snapshot or the stream built: one without a key needs a delete topic. */
  private onTable(table: TableSchema): void {
    if (table.keySchema === null) this.markKeyless(table.id, table.topic);
  }

  /**
   * Ask for the topic of a table without a key to be created cleanup.policy=delete,
   * once per topic; a topic the user's config compacts explicitly fails the task
   * instead (checked at start for the tables known then, here for later ones).
   */
  private markKeyless(id: TableId, topic: string): void {
    if (this.keylessTopics.has(topic)) return;
    if (explicitCompaction(this.s.topicCreation, topic) !== null) {
      const why = keylessCompactedError(this.s.names.topics, [id], this.s.topicCreation);
      this.fail(new ConnectException(why ?? `Table ${id.schema}.${id.table} has no key`));
      return;
    }
    this.keylessTopics.add(topic);
    this.ctx.topicCreationOverride(topic, DELETE_POLICY);
    this.log.info(
      `table ${id.schema}.${id.table} has no primary key: topic ${topic} is created with cleanup.policy=delete, ` +
        'as a compacted topic refuses records without a key',
    );
  }

  private modes(): MappingModes {
    return mappingModes(this.s);
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.phase = 'failed';
    this.detail = error.message;
    this.log.error({ err: error }, error.message);
    this.queue?.wake();
  }
}

/** The incremental snapshot's own signals, which only the signal table carries. */
function isWatermark(signal: SignalRecord): boolean {
  return signal.type === WINDOW_OPEN || signal.type === WINDOW_CLOSE;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The task's own offset fields (PostgresCdcSourceTask.taskState); undefined: none now. */
interface TaskState {
  readonly snapshot: SourceOffset | null | undefined;
  readonly signals: SourceOffset | null | undefined;
}

/**
 * `offset` with `state` in it; `offset` itself when there is nothing to add. An offset
 * with a snapshot state of its own (a window's read, incremental-snapshot.ts) keeps it.
 */
function withState(offset: SourceOffset, state: TaskState): SourceOffset {
  const snapshot = state.snapshot && !(COLLECTIONS in offset) ? state.snapshot : undefined;
  if (!snapshot && !state.signals) return offset;
  return { ...offset, ...snapshot, ...state.signals };
}
