/**
 * Connectors: the part of a plugin that reads its configuration and splits the work
 * into task configurations. Tasks do the copying (source-task.ts, sink-task.ts).
 *
 * Lifecycle, driven by the worker that owns the connector (one instance per worker
 * assignment, never shared between connectors):
 *   1. The runtime checks the raw config against the manifest's `configDefs`, then
 *      calls `validate(values)` for cross-field checks; errors of both go, per key,
 *      to REST `/config/validate` and refuse the create/update.
 *   2. `start(config, context)` once. Config values are the strings the user gave
 *      (Kafka Connect's convention), so they can be passed on to tasks verbatim.
 *   3. `taskConfigs(maxTasks)` after start and again whenever the connector calls
 *      `context.requestTaskReconfiguration()`; return at most `maxTasks` configs. The
 *      runtime restarts tasks only when the returned list differs from the stored one.
 *   4. `stop()` once, when the connector is deleted, stopped, reassigned or the worker
 *      shuts down. It must release every timer and connection it opened: the runtime
 *      awaits it and reports an error if it rejects.
 *   5. `deleted(config)` once more, only when the connector was deleted (not stopped,
 *      paused or moved to another worker): after stop() and after the worker stopped
 *      the connector's tasks it runs. This is where external state that outlives the
 *      connector (a replication slot, a publication) is dropped, or where the
 *      connector says that it remains. Its errors are logged; they never block the
 *      delete. It gets no context and may not call back into the runtime.
 * Start, stop and deleted each run under a deadline (a hung call is abandoned and the
 * connector marked FAILED), so a call that waits on an external system must not
 * wait forever.
 * All calls come from the worker's event loop, one at a time (never overlapping for
 * one instance). Background work a connector starts (e.g. watching a table list) must
 * be owned by the instance and ended in stop().
 */
import type { ConfigError } from '../../config/config-def.ts';
import type { SourceOffset, SourcePartition, TopicPartitionOffset } from './connect-record.ts';
import type { OffsetStorageReader } from './offset-storage-reader.ts';

/** Connector and task configurations: string keys and string values, as Connect stores them. */
export type ConnectorConfig = Readonly<Record<string, string>>;
export type TaskConfig = Readonly<Record<string, string>>;

export interface ConnectorContext {
  /** The connector's name, as created through REST or a properties file. */
  readonly connectorName: string;
  /**
   * Ask the runtime to call `taskConfigs()` again (e.g. a new table appeared). Safe to
   * call at any time from the connector's own background work; calls coalesce.
   */
  requestTaskReconfiguration(): void;
  /**
   * Report an error the connector found in the background (outside any runtime call):
   * the connector moves to FAILED with this error as its trace. Errors thrown from
   * start/taskConfigs/stop are reported the same way without calling this.
   */
  raiseError(error: Error): void;
}

export interface SourceConnectorContext extends ConnectorContext {
  /** Offsets committed by this connector's tasks, e.g. to plan task configs. */
  readonly offsetStorageReader: OffsetStorageReader;
}

export type SinkConnectorContext = ConnectorContext;

interface ConnectorBase<C extends ConnectorContext> {
  /** The plugin version, reported in status and `/connector-plugins`. */
  version(): string;
  start(config: ConnectorConfig, context: C): Promise<void> | void;
  taskConfigs(maxTasks: number): Promise<TaskConfig[]> | TaskConfig[];
  stop(): Promise<void> | void;
  /**
   * Cross-field checks, called with the values already typed by the manifest's
   * configDefs (defaults filled in, unknown keys as given) and only when every key
   * parsed. Return one error per offending key; an empty array means valid.
   * `context` tells which other connectors the cluster has, so a connector can refuse
   * an exclusive external resource (a replication slot) another one already uses.
   */
  validate?(values: Readonly<Record<string, unknown>>, context: ValidationContext): ConfigError[];
  /** See step 5 of the lifecycle above. */
  deleted?(config: ConnectorConfig): Promise<void> | void;
  /**
   * What the connector keeps outside Kafka right now (a replication slot and the WAL
   * it retains, a queue's position), shown under `external` in
   * GET /connectors/{name}/status. Called on whichever worker answers the request, on
   * a fresh instance that was never started, in any state: a STOPPED connector's slot
   * still retains WAL. Read-only and quick: the runtime waits for it at most a few
   * seconds and shows an error in its place when it throws or is late. Keys are
   * snake_case, as the rest of the status body.
   */
  externalState?(config: ConnectorConfig): Promise<Record<string, unknown>>;
}

/** What `validate` knows of the cluster besides the config under test. */
export interface ValidationContext {
  /**
   * The name of the connector being created or updated; null when a config is only
   * validated (`PUT /connector-plugins/{type}/config/validate`) without a `name`.
   */
  readonly connectorName: string | null;
  /**
   * Every other connector of the cluster (every class) with the config it was
   * stored with; the connector under test itself is left out.
   */
  readonly otherConnectors: ReadonlyArray<{
    readonly name: string;
    readonly config: ConnectorConfig;
  }>;
}

/** What a source connector promises for exactly-once delivery (KIP-618's ExactlyOnceSupport). */
export type ExactlyOnceSupport = 'SUPPORTED' | 'UNSUPPORTED';

/** Whether a source connector can define its own transaction boundaries (KIP-618). */
export type ConnectorTransactionBoundaries = 'SUPPORTED' | 'UNSUPPORTED';

export interface SourceConnector extends ConnectorBase<SourceConnectorContext> {
  /**
   * Whether, with `config`, the connector's tasks can resume from their committed
   * offsets without re-reading or skipping data: the runtime then makes delivery
   * exactly-once (each transaction holds records and the offsets that cover them).
   * Asked when `exactly.once.support=required` is validated; absent or null is
   * Kafka's "does not implement the API required for preflight validation".
   */
  exactlyOnceSupport?(config: ConnectorConfig): ExactlyOnceSupport | null;
  /**
   * Whether its tasks call the TransactionContext (source-task.ts) to end
   * transactions, as `transaction.boundary=connector` needs. Absent: UNSUPPORTED.
   */
  canDefineTransactionBoundaries?(config: ConnectorConfig): ConnectorTransactionBoundaries;
  /**
   * Called while the connector is STOPPED, before REST `PATCH|DELETE /offsets` writes
   * new offsets (null offset = reset that partition). Throw to refuse. Return true if
   * the connector handled external state itself, false if it has none to adjust.
   */
  alterOffsets?(
    config: ConnectorConfig,
    offsets: ReadonlyArray<{ partition: SourcePartition; offset: SourceOffset | null }>,
  ): Promise<boolean> | boolean;
}

export interface SinkConnector extends ConnectorBase<SinkConnectorContext> {
  /** As for sources, for consumer offsets (`offset` null = reset the partition). */
  alterOffsets?(
    config: ConnectorConfig,
    offsets: ReadonlyArray<Omit<TopicPartitionOffset, 'offset'> & { offset: number | null }>,
  ): Promise<boolean> | boolean;
}

export type Connector = SourceConnector | SinkConnector;
