/**
 * The streaming loop of one task: a session (catalog connection, type registry,
 * ChangeEventSource, ReplicationStream) that is rebuilt with back-off whenever the
 * connection is lost, until stop().
 *
 * Resuming after a reconnect: Postgres re-sends everything after the slot's confirmed
 * position, which lags what this task already handed on (confirmation waits for the
 * runtime's offset commit). The new session's change source therefore skips up to the
 * last record emitted (same rule as a restart from a stored offset), and the new
 * stream may confirm idle keepalives only when the caller has nothing unconfirmed
 * (`canConfirmIdle`), so the slot never moves past records still owed downstream.
 *
 * Failures: a decode error, a missing slot or rejected credentials end the loop
 * (`onFatal`). A slot another process holds (SQLSTATE 55006, "replication slot ... is
 * active") is retried every `slotRetry.delayMs` up to `slotRetry.maxRetries` times in a
 * row (Debezium's slot.max.retries and slot.retry.delay.ms), then ends the loop naming
 * the holder. Anything else (connection refused, reset, walsender killed) is retried
 * with exponential back-off from `backoff.initialMs` to `backoff.maxMs`, up to
 * `errorsMaxRetries` times in a row (errors.max.retries; -1 without limit). Both counts
 * start again once a session streams. Each retry is reported through
 * `onState('retrying', detail)`: what failed, which retry of how many, the holder and
 * the WAL the slot retains meanwhile (asked of Postgres, `inspectSlot`).
 *
 * Owner: the task. start() once, stop() once; stop() interrupts a back-off wait,
 * closes both connections and resolves when the loop has ended.
 */
import pg from 'pg';
import { type SourceRecord, Wakeup } from '../../../src/connect/api/index.ts';
import {
  ChangeEventSource,
  type ChangeEventSourceOptions,
  type CompletedTransaction,
  type ResumePoint,
  resumePointOf,
} from './change-event-source.ts';
import type { StreamingEventCounts } from './debezium-metrics.ts';
import type { EventContext } from './event-builder.ts';
import { MESSAGES_SINCE_VERSION, type MessagePrefixFilter } from './logical-decoding-message.ts';
import type { Lsn } from './lsn.ts';
import { slotHeldError } from './replication-slot.ts';
import { ReplicationStream, ReplicationStreamError } from './replication-stream.ts';
import { RetryBudget } from './retry-budget.ts';
import { describeHolder, describeRetained, isSlotInUse, type SlotUsage } from './slot-usage.ts';
import type { TableFilter } from './table-filter.ts';
import type { TableSchema } from './table-schema.ts';
import { SESSION_OPTIONS } from './text-values.ts';
import type { MappingModes } from './type-mapping.ts';
import { TypeRegistry } from './type-registry.ts';

export type StreamState = 'connecting' | 'streaming' | 'retrying' | 'stopped' | 'failed';

export interface StreamRunnerOptions {
  connection: pg.ClientConfig;
  slotName: string;
  publicationName: string;
  context: EventContext;
  filter: TableFilter;
  modes: MappingModes;
  topicPrefix: string;
  skippedOperations: ReadonlySet<string>;
  statusIntervalMs: number;
  startLsn: Lsn;
  resumeAfter: ResumePoint | null;
  backoff: { initialMs: number; maxMs: number };
  /** slot.max.retries and slot.retry.delay.ms. */
  slotRetry: { maxRetries: number; delayMs: number };
  /** errors.max.retries: -1 without limit. */
  errorsMaxRetries: number;
  /** streaming.delay.ms: how long to wait before the first session (stop() ends the wait). */
  startDelayMs?: number;
  /** The slot as Postgres sees it now (holder, retained WAL); may reject when unreachable. */
  inspectSlot(): Promise<SlotUsage | null>;
  emit(records: SourceRecord[]): void;
  /** See ChangeEventSourceOptions.onTable. */
  onTable?(table: TableSchema): void;
  onCommit(tx: CompletedTransaction): void;
  /** Counted by every session's change event source (Debezium's streaming metrics). */
  events?: StreamingEventCounts;
  /** message.prefix.include.list / exclude.list, for logical decoding messages. */
  messageFilter?: MessagePrefixFilter;
  /** See ChangeEventSourceOptions.onChange (signals, incremental snapshots). */
  onChange?: ChangeEventSourceOptions['onChange'];
  canConfirmIdle(): boolean;
  /** See ReplicationStreamOptions.onIdleKeepalive (read-only incremental snapshots). */
  onIdleKeepalive?(walEnd: Lsn): void;
  onState(state: StreamState, detail?: string): void;
  onFatal(error: Error): void;
}

interface Session {
  catalog: pg.Client;
  source: ChangeEventSource | null;
  stream: ReplicationStream | null;
  live: boolean;
}

export class StreamRunner {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private session: Session | null = null;
  private readonly backoffWait = new Wakeup();
  private resumeAfter: ResumePoint | null;
  private confirmed: Lsn;
  /** Highest WAL position the server reported sending, across sessions. */
  private serverWalEnd: Lsn = 0;
  private paused = false;
  /** The slot as last asked of Postgres while retrying; null before any retry. */
  lastUsage: SlotUsage | null = null;

  constructor(private readonly o: StreamRunnerOptions) {
    this.resumeAfter = o.resumeAfter;
    this.confirmed = o.startLsn;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Confirm `lsn` now, or when the next session starts if disconnected. */
  confirm(lsn: Lsn): void {
    if (lsn > this.confirmed) this.confirmed = lsn;
    // Status frames are valid only once the stream is in CopyBoth mode; a session still
    // starting picks the position up when it goes live.
    if (this.session?.live) this.session.stream?.confirm(lsn);
  }

  /** Asks the live session's server for a keepalive (nothing between sessions). */
  requestKeepalive(): void {
    if (this.session?.live) this.session.stream?.requestKeepalive();
  }

  /** Stop reading from the socket (back-pressure); applies to later sessions too. */
  pause(): void {
    this.paused = true;
    this.session?.stream?.pause();
  }

  resume(): void {
    this.paused = false;
    this.session?.stream?.resume();
  }

  /** The flushed LSN reported to Postgres (or to be reported on reconnect). */
  get confirmedLsn(): Lsn {
    return Math.max(this.confirmed, this.session?.stream?.flushedLsn ?? 0);
  }

  get walEnd(): Lsn {
    return Math.max(this.serverWalEnd, this.session?.stream?.serverWalEnd ?? 0);
  }

  /** True while a transaction's records may still be coming. */
  get busy(): boolean {
    return this.session?.source?.busy ?? false;
  }

  /** The live session's catalog connection, for heartbeat queries and lag; null between sessions. */
  get catalog(): pg.Client | null {
    return this.session?.live ? this.session.catalog : null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.backoffWait.wake();
    await this.closeSession();
    await this.loop;
  }

  private async run(): Promise<void> {
    const o = this.o;
    const slotBudget = new RetryBudget('slot.max.retries', o.slotRetry.maxRetries);
    const errorBudget = new RetryBudget('errors.max.retries', o.errorsMaxRetries);
    let backoffStep = 0;
    if (o.startDelayMs) await this.backoffWait.wait(o.startDelayMs);
    while (!this.stopping) {
      try {
        o.onState('connecting');
        const { done } = await this.openSession();
        slotBudget.reset();
        errorBudget.reset();
        backoffStep = 0;
        o.onState('streaming');
        await done;
      } catch (error) {
        await this.closeSession();
        if (this.stopping) break;
        const e = error instanceof Error ? error : new Error(String(error));
        if (isFatal(e)) {
          o.onState('failed', e.message);
          o.onFatal(e);
          return;
        }
        const held = isSlotInUse(e);
        const budget = held ? slotBudget : errorBudget;
        const usage = await o.inspectSlot().catch(() => null);
        if (usage) this.lastUsage = usage;
        if (!budget.take()) {
          const fatal = held
            ? slotHeldError(o.slotName, usage, budget.exhausted(), o.slotRetry.delayMs, e)
            : new Error(`gave up ${budget.exhausted()}: ${e.message}`, { cause: e });
          o.onState('failed', fatal.message);
          o.onFatal(fatal);
          return;
        }
        const delay = held
          ? o.slotRetry.delayMs
          : Math.min(o.backoff.maxMs, o.backoff.initialMs * 2 ** backoffStep++);
        const what = held
          ? `replication slot '${o.slotName}' is held by ${describeHolder(usage)}`
          : e.message;
        o.onState(
          'retrying',
          `${what}; ${budget.describe()}, next attempt in ${delay} ms; ${describeRetained(usage)}`,
        );
        await this.backoffWait.wait(delay);
      }
    }
    await this.closeSession();
    o.onState('stopped');
  }

  private async openSession(): Promise<{ done: Promise<void> }> {
    const o = this.o;
    const catalog = new pg.Client({ ...o.connection, options: SESSION_OPTIONS });
    let failSession: (e: unknown) => void = () => undefined;
    const sessionFailed = new Promise<never>((_, reject) => {
      failSession = reject;
    });
    sessionFailed.catch(() => undefined);
    catalog.on('error', (e) => failSession(e));
    const session: Session = { catalog, source: null, stream: null, live: false };
    this.session = session;
    await catalog.connect();
    const registry = new TypeRegistry(catalog);
    await registry.load();
    const messages = await sendsMessages(catalog);
    if (this.stopping) throw new Error('stopping');
    const source = new ChangeEventSource({
      context: o.context,
      catalog,
      registry,
      modes: o.modes,
      filter: o.filter,
      topicPrefix: o.topicPrefix,
      skippedOperations: o.skippedOperations,
      resumeAfter: this.resumeAfter,
      ...(o.events !== undefined ? { events: o.events } : {}),
      ...(o.messageFilter !== undefined ? { messageFilter: o.messageFilter } : {}),
      emit: (records) => {
        this.resumeAfter =
          resumePointOf(records[records.length - 1].sourceOffset) ?? this.resumeAfter;
        o.emit(records);
      },
      onCommit: (tx) => o.onCommit(tx),
      onError: (e) => failSession(e),
      onTable: (table) => o.onTable?.(table),
      ...(o.onChange !== undefined ? { onChange: o.onChange } : {}),
    });
    const stream = new ReplicationStream({
      connection: { ...o.connection, options: SESSION_OPTIONS },
      slotName: o.slotName,
      publicationNames: [o.publicationName],
      startLsn: this.confirmed,
      statusIntervalMs: o.statusIntervalMs,
      messages,
      canConfirmIdle: () => !source.busy && o.canConfirmIdle(),
      onMessage: (m, lsn) => source.accept(m, lsn),
      onFlushed: (lsn) => {
        if (lsn > this.confirmed) this.confirmed = lsn;
      },
      onIdleKeepalive: (walEnd) => {
        if (!source.busy) o.onIdleKeepalive?.(walEnd);
      },
    });
    session.source = source;
    // Set before start, so a stop() during start closes this stream too.
    session.stream = stream;
    const { done } = await stream.start();
    session.live = true;
    stream.confirm(this.confirmed);
    if (this.paused) stream.pause();
    return { done: Promise.race([done, sessionFailed]) };
  }

  private async closeSession(): Promise<void> {
    const s = this.session;
    this.session = null;
    if (!s) return;
    if (s.stream) this.serverWalEnd = Math.max(this.serverWalEnd, s.stream.serverWalEnd);
    await s.stream?.stop();
    await s.catalog.end().catch(() => undefined);
  }
}

/**
 * Whether the server's pgoutput can send logical decoding messages: asked for on 14 and
 * later, as Debezium does; older servers refuse the option (and send none).
 */
async function sendsMessages(catalog: pg.Client): Promise<boolean> {
  const r = await catalog.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
  return Number(r.rows[0]?.v) >= MESSAGES_SINCE_VERSION;
}

/** Errors that retrying cannot fix. */
function isFatal(e: Error): boolean {
  if (e instanceof ReplicationStreamError && e.kind === 'decode') return true;
  const code = (e.cause as { code?: string } | undefined)?.code ?? (e as { code?: string }).code;
  // 42704: the slot does not exist; 28P01/28000: credentials or pg_hba rejected.
  return code === '42704' || code === '28P01' || code === '28000';
}
