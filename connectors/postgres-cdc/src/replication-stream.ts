/**
 * One logical replication connection: START_REPLICATION on a slot with pgoutput,
 * XLogData frames decoded and handed to the caller in WAL order, keepalives answered,
 * and the flushed position reported to Postgres only when the caller says so.
 *
 * Frames inside the CopyBoth stream (https://www.postgresql.org/docs/current/protocol-replication.html):
 *   w  XLogData            wal_start int64, wal_end int64, send_time int64, payload
 *   k  Primary keepalive   wal_end int64, send_time int64, reply_requested int8
 *   r  Standby status      written int64, flushed int64, applied int64, clock int64, reply int8
 *
 * Which LSN is reported as flushed (this is what Postgres stores as the slot's
 * confirmed_flush_lsn, and what it may recycle WAL and skip transactions up to):
 *   - confirm(lsn): the caller's word that everything up to `lsn` is safe. The CDC task
 *     calls it with a transaction's Commit end_lsn once the offsets holding that
 *     transaction are committed. Postgres skips a transaction on restart when its
 *     commit record lies below the confirmed position, so the Commit's *end* LSN is the
 *     smallest position that does not re-send it. A non-transactional logical decoding
 *     message likewise, at its LSN (pgoutput gives the end of its record).
 *   - idle keepalives: when nothing is in flight (no open transaction, every commit
 *     received has been confirmed, and the caller's canConfirmIdle agrees), a
 *     keepalive's wal_end is reported as flushed. WAL
 *     up to there held no captured change we have not delivered and had committed, so
 *     an idle captured table does not pin WAL while other tables are busy.
 *   - never anything else: the written position follows what was received, but the
 *     flushed (and applied) position only moves by the two rules above.
 *
 * Crash behaviour: nothing is kept here. After a crash Postgres resumes at
 * max(requested start, confirmed_flush_lsn); everything not confirmed is sent again.
 *
 * Threading: callbacks run on the event loop, in frame order. `onMessage` must not
 * block for long; the caller applies backpressure with pause()/resume(), which stop
 * and restart reading from the socket. One owner: whoever called start() calls stop().
 */
import pg from 'pg';
import { formatLsn, type Lsn, readLsn, writeLsn } from './lsn.ts';
import { decodePgoutput, type PgoutputMessage } from './pgoutput-decoder.ts';

export interface ReplicationStreamOptions {
  connection: pg.ClientConfig;
  slotName: string;
  publicationNames: string[];
  /** Where to ask Postgres to start; it starts at the slot's confirmed position if later. */
  startLsn: Lsn;
  /** How often a status update is sent unprompted (Debezium's status.update.interval.ms). */
  statusIntervalMs: number;
  /** Called for every decoded message, in WAL order. `walEnd` is the frame's wal_end. */
  onMessage(message: PgoutputMessage, walStart: Lsn): void;
  /** Sees each XLogData payload before decoding (benchmarks capture frames with it). */
  onPayload?(payload: Buffer): void;
  /** Called when the flushed position sent to Postgres advances (for metrics and tests). */
  onFlushed?(lsn: Lsn): void;
  /**
   * Called for each keepalive that comes between transactions, with its wal_end: every
   * transaction that commits before it has been handed to onMessage.
   */
  onIdleKeepalive?(walEnd: Lsn): void;
  /**
   * Asked before an idle keepalive's position is confirmed: false while the caller
   * still owes records of WAL received on an earlier connection (after a reconnect
   * this stream has seen no commit yet, but the caller's earlier ones are unconfirmed).
   */
  canConfirmIdle?(): boolean;
  /** Ask for pgoutput's logical decoding messages (pg_logical_emit_message) too. */
  messages?: boolean;
}

export class ReplicationStreamError extends Error {
  constructor(
    readonly kind: 'connect' | 'start' | 'connection-lost' | 'decode',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReplicationStreamError';
  }
}

interface PgConnection {
  on(event: 'copyData', listener: (msg: { chunk: Buffer }) => void): void;
  once(event: 'replicationStart', listener: () => void): void;
  sendCopyFromChunk(chunk: Buffer): void;
  stream: { pause(): void; resume(): void };
}

export class ReplicationStream {
  /** Highest wal_end seen in any frame: how far the server has sent. */
  serverWalEnd: Lsn = 0;
  /** Last position reported to Postgres as flushed. */
  flushedLsn: Lsn = 0;
  private receivedLsn: Lsn = 0;
  /** End LSN of the last Commit received; in flight while above flushedLsn. */
  private lastCommitEnd: Lsn = 0;
  private inTransaction = false;
  private client: pg.Client | undefined;
  private connection: PgConnection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private ended: Promise<void> | undefined;

  constructor(private readonly options: ReplicationStreamOptions) {
    this.flushedLsn = options.startLsn;
  }

  /**
   * Connect and start streaming. Resolves once Postgres has entered CopyBoth mode.
   * `done` then settles when the stream ends: resolved after stop(), rejected with a
   * ReplicationStreamError when the connection or the decoding fails.
   */
  async start(): Promise<{ done: Promise<void> }> {
    const o = this.options;
    const client = new pg.Client({ ...o.connection, replication: 'database' } as pg.ClientConfig);
    this.client = client;
    let failed: (error: unknown) => void = () => undefined;
    const failure = new Promise<never>((_, reject) => {
      failed = reject;
    });
    failure.catch(() => undefined);
    client.on('error', (error) => failed(error));
    try {
      await client.connect();
    } catch (error) {
      throw new ReplicationStreamError(
        'connect',
        `cannot open a replication connection: ${message(error)}`,
        {
          cause: error,
        },
      );
    }
    const connection = (client as unknown as { connection: PgConnection }).connection;
    this.connection = connection;
    connection.on('copyData', ({ chunk }) => {
      try {
        this.onFrame(chunk);
      } catch (error) {
        failed(new ReplicationStreamError('decode', message(error), { cause: error }));
      }
    });
    const started = new Promise<void>((resolve) => connection.once('replicationStart', resolve));
    const pubs = o.publicationNames.map((p) => `"${p.replaceAll('"', '""')}"`).join(',');
    const sql =
      `START_REPLICATION SLOT "${o.slotName.replaceAll('"', '""')}" LOGICAL ${formatLsn(o.startLsn)} ` +
      `(proto_version '1', publication_names '${pubs.replaceAll("'", "''")}'` +
      `${o.messages ? ", messages 'true'" : ''})`;
    // The query settles only when the stream ends (CopyDone or error).
    const query = client.query(sql).then(
      () => undefined,
      (error: unknown) => {
        throw error;
      },
    );
    query.catch(() => undefined);
    try {
      await Promise.race([started, query, failure]);
    } catch (error) {
      await this.close();
      throw new ReplicationStreamError('start', `START_REPLICATION failed: ${message(error)}`, {
        cause: error,
      });
    }
    this.timer = setInterval(() => this.sendStatus(false), o.statusIntervalMs);
    this.timer.unref();
    this.ended = Promise.race([query, failure]).then(
      () => {
        if (!this.stopping)
          throw new ReplicationStreamError(
            'connection-lost',
            'the replication stream ended unexpectedly',
          );
      },
      async (error: unknown) => {
        await this.close();
        if (this.stopping) return;
        if (error instanceof ReplicationStreamError) throw error;
        throw new ReplicationStreamError(
          'connection-lost',
          `replication connection lost: ${message(error)}`,
          {
            cause: error,
          },
        );
      },
    );
    return { done: this.ended };
  }

  /** Everything up to `lsn` is safe (its offsets are committed): Postgres may let it go. */
  confirm(lsn: Lsn): void {
    if (lsn <= this.flushedLsn) return;
    this.flushedLsn = lsn;
    this.sendStatus(false);
    this.options.onFlushed?.(lsn);
  }

  pause(): void {
    this.connection?.stream.pause();
  }

  resume(): void {
    this.connection?.stream.resume();
  }

  /** End the stream and wait until the connection is closed. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.close();
    await this.ended?.catch(() => undefined);
  }

  private async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }

  private onFrame(frame: Buffer): void {
    const kind = frame[0];
    if (kind === 0x77 /* w */) {
      const walStart = readLsn(frame, 1);
      const walEnd = readLsn(frame, 9);
      if (walEnd > this.serverWalEnd) this.serverWalEnd = walEnd;
      this.options.onPayload?.(frame.subarray(25));
      const msg = decodePgoutput(frame, 25);
      if (msg.tag === 'begin') this.inTransaction = true;
      else if (msg.tag === 'commit') {
        this.inTransaction = false;
        this.received(msg.endLsn);
      } else if (msg.tag === 'message' && !msg.transactional && !this.inTransaction) {
        // A unit of its own, like a transaction. Its LSN is its record's end: once
        // that is confirmed, Postgres does not send it again (change-event-source.ts).
        this.received(walStart);
      }
      this.options.onMessage(msg, walStart);
    } else if (kind === 0x6b /* k */) {
      const walEnd = readLsn(frame, 1);
      if (walEnd > this.serverWalEnd) this.serverWalEnd = walEnd;
      const replyRequested = frame[17] === 1;
      if (
        !this.inTransaction &&
        this.lastCommitEnd <= this.flushedLsn &&
        walEnd > this.flushedLsn &&
        (this.options.canConfirmIdle?.() ?? true)
      ) {
        // Idle: nothing received is waiting for an offset commit, so the server's
        // position can be confirmed without skipping anything we owe downstream.
        this.receivedLsn = Math.max(this.receivedLsn, walEnd);
        this.flushedLsn = walEnd;
        this.sendStatus(false);
        this.options.onFlushed?.(walEnd);
      } else if (replyRequested) {
        this.sendStatus(false);
      }
      if (!this.inTransaction) this.options.onIdleKeepalive?.(walEnd);
    }
  }

  /** Asks the server for a keepalive now (a status update with its reply byte set). */
  requestKeepalive(): void {
    this.sendStatus(true);
  }

  /** A commit (or a non-transactional message) whose confirmation position is `end`. */
  private received(end: Lsn): void {
    this.lastCommitEnd = end;
    if (end > this.receivedLsn) this.receivedLsn = end;
  }

  private sendStatus(requestReply: boolean): void {
    if (!this.connection || !this.client) return;
    const frame = Buffer.alloc(34);
    frame[0] = 0x72; // r
    writeLsn(frame, Math.max(this.receivedLsn, this.flushedLsn), 1);
    writeLsn(frame, this.flushedLsn, 9);
    writeLsn(frame, this.flushedLsn, 17);
    // Client clock in µs since 2000-01-01; informational for the server.
    const micros = Date.now() * 1000 - 946_684_800_000_000;
    frame.writeUInt32BE(Math.floor(micros / 0x1_0000_0000), 25);
    frame.writeUInt32BE(micros % 0x1_0000_0000, 29);
    frame[33] = requestReply ? 1 : 0;
    this.connection.sendCopyFromChunk(frame);
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
