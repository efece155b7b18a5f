/**
 * The broker's TCP listener: Kafka's size-prefixed framing, many requests in flight
 * per connection, responses written in request order.
 *
 * Framing: every request is `int32 size` followed by `size` bytes (header + body).
 * A frame larger than `maxRequestBytes` (socket.request.max.bytes) or with a negative
 * size cannot be skipped safely, so that connection alone is closed and logged; every
 * other connection is unaffected.
 *
 * Ordering: the handler may answer asynchronously (a Fetch long-poll, a Produce waiting
 * for fsync), but Kafka clients match responses by order as well as correlation id, so
 * each connection keeps a FIFO of pending answers and writes the head as soon as it is
 * ready. A handler that answers `null` sends nothing (acks=0 produce); one that
 * answers `'close'` (a malformed or unsupported request) has the connection closed
 * once the answers before it are written. An answer may be one Buffer or a list of
 * chunks (a Fetch response passes stored record batches through uncopied); chunks
 * are written under cork, so the kernel sees one writev.
 *
 * Back-pressure: when more than `maxInFlight` requests of one connection are pending,
 * or the socket's write buffer is full, reading from that socket pauses until the
 * backlog drains, so a fast producer cannot make the broker buffer without bound.
 *
 * Memory: a busy producer connection must not turn every read and every request into
 * a fresh ArrayBuffer, since the broker thread collects garbage rarely and dead
 * buffers pile up between collections (util/buffer-pool.ts says more). So sockets read into
 * one buffer shared by every connection of the server (net's `onread`; safe because
 * each read is copied out before the callback returns, and callbacks never overlap
 * on one thread), and each frame is copied from there into a buffer lent by the
 * connection's own BufferPool (buffers never move between connections), taken as soon
 * as the size prefix is read (as Kafka's
 * NetworkReceive does: socket.request.max.bytes bounds what one frame can cost). The
 * handler gets the frame with a `release` callback: until it calls it the frame is
 * its own; after it, the bytes will be overwritten by a later frame of the same
 * connection. A handler that keeps views of the frame never calls it, and that frame
 * is simply never reused. Where the runtime gives no access to the accepted socket's
 * handle (see readingInto), sockets read with 'data' events, framed the same way.
 *
 * Answers borrow too: each request's handler gets `connection.answerBuffers`, its own
 * AnswerHold on the server's BufferPool (answer-buffers.ts, util/buffer-pool.ts), and a Fetch reads
 * stored batches into them. The hold is released exactly once: in the callback of
 * the answer's last socket.write (writes on one socket complete in order, and Node
 * calls it once libuv is done with the bytes, also when the socket is destroyed), at
 * once for an answer with nothing to write, or, for an answer that will never be
 * written (connection closed, 'close', a failed handler), as soon as its handler is
 * done, never before: until then the handler may still be reading into its buffers.
 *
 * Single-threaded: everything here runs on the broker thread's event loop.
 */
import {
  createServer,
  type OnReadOpts,
  type Server,
  Socket,
  type SocketConstructorOpts,
} from 'node:net';
import { type BufferLease, BufferPool } from '../../util/buffer-pool.ts';
import type { Logger } from '../../util/logger.ts';
import { type AnswerBuffers, AnswerHold } from './answer-buffers.ts';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  /**
   * What the handler of this request may borrow for its answer, given back once the
   * answer is written; each request gets its own. Absent outside a request (onClose).
   */
  readonly answerBuffers?: AnswerBuffers;
}

/**
 * A full response frame (with its size prefix) as one Buffer or as chunks, null for
 * no answer, or 'close' to close the connection after the answers before it.
 */
export type FrameAnswer = Buffer | readonly Buffer[] | null | 'close';

/**
 * Answers one request frame (without its size prefix). `release` hands the frame back
 * for reuse: call it only once nothing will read the frame or a view of it again.
 */
export type FrameHandler = (
  frame: Buffer,
  connection: ConnectionInfo,
  release: () => void,
) => FrameAnswer | Promise<FrameAnswer>;

export interface SocketServerOptions {
  host: string;
  port: number;
  maxRequestBytes: number;
  handler: FrameHandler;
  logger: Logger;
  /** Pending requests per connection before reading pauses. */
  maxInFlight?: number;
  /** Called when a connection closes, for state kept per connection. */
  onClose?: (connection: ConnectionInfo) => void;
  /**
   * Size of the read buffer shared by all connections; 0 reads with 'data' events
   * instead (a fresh buffer per read). Tests use tiny ones to split frames.
   */
  readBufferBytes?: number;
  /**
   * A connection that lent no frame for this long drops its pooled frames; answer
   * buffers of a size nothing borrowed for this long are dropped too.
   */
  poolIdleMs?: number;
  /** The pool answers borrow from (tests watch one); by default a new one. */
  answerBufferPool?: BufferPool;
}

const SIZE_PREFIX = 4;
/**
 * One read takes up to this much: 4 reads per 1 MB Produce request instead of the 16
 * of libuv's default 64 KiB, and a single 256 KiB buffer for the whole server.
 */
const READ_BUFFER_BYTES = 256 * 1024;
const POOL_IDLE_MS = 5_000;

export class SocketServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;
  private boundPort = 0;
  private readonly readBuffer: Buffer | undefined;
  private readonly answerPool: BufferPool;
  private trimTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SocketServerOptions) {
    this.answerPool = options.answerBufferPool ?? new BufferPool();
    const readBufferBytes = options.readBufferBytes ?? READ_BUFFER_BYTES;
    this.readBuffer = readBufferBytes > 0 ? Buffer.alloc(readBufferBytes) : undefined;
    // Paused until accept() has chosen how the socket reads.
    this.server = createServer({ noDelay: true, pauseOnConnect: true }, (socket) =>
      this.accept(socket),
    );
  }

  get port(): number {
    return this.boundPort;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once('error', onError);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', onError);
        const address = this.server.address();
        this.boundPort = typeof address === 'object' && address ? address.port : this.options.port;
        this.trimTimer = setInterval(() => {
          for (const c of this.connections) c.trimIdlePool();
          this.answerPool.trimIfIdle();
        }, this.options.poolIdleMs ?? POOL_IDLE_MS);
        this.trimTimer.unref();
        resolve();
      });
    });
  }

  /**
   * Stops accepting, lets pending answers of open connections finish for up to
   * `graceMs`, then closes every connection.
   */
  async close(graceMs = 2000): Promise<void> {
    clearInterval(this.trimTimer);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.race([
      Promise.all([...this.connections].map((c) => c.drained())),
      new Promise((r) => setTimeout(r, graceMs).unref()),
    ]);
    for (const c of this.connections) c.destroy();
    await closed;
    // Handlers still running after this borrow buffers of their own.
    this.answerPool.close();
  }

  /** Open client connections (metrics). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Bytes of frame buffers waiting for reuse, over all connections (tests, diagnostics). */
  get pooledFrameBytes(): number {
    let sum = 0;
    for (const c of this.connections) sum += c.pooledFrameBytes;
    return sum;
  }

  private accept(accepted: Socket): void {
    const info: ConnectionInfo = {
      id: this.nextConnectionId++,
      remoteAddress: `${accepted.remoteAddress}:${accepted.remotePort}`,
    };
    const shared = this.readBuffer;
    let connection!: Connection;
    // No read can arrive before `connection` is set: reading starts on a later loop turn.
    const socket = shared && readingInto(accepted, shared, (n) => connection.receive(shared, n));
    connection = new Connection(socket ?? accepted, info, this.options, this.answerPool);
    if (socket === undefined) {
      accepted.on('data', (chunk: Buffer) => connection.receive(chunk, chunk.length));
      accepted.resume();
    }
    this.connections.add(connection);
    connection.socket.once('close', () => {
      this.connections.delete(connection);
      this.options.onClose?.(info);
    });
  }
}

/**
 * The accepted connection again, as a socket that reads into `buffer` and calls
 * `onRead` with the byte count (net's `onread`); undefined, leaving `accepted` as it
 * was, when the runtime does not expose the handle this needs.
 *
 * Node 20 passes `onread` only to sockets it connects, not to those a server accepts,
 * so the accepted (paused, never read) socket gives its libuv handle to a new Socket
 * that has it. `_handle` and the `handle` option are Node's own, unlisted in its docs
 * but what it uses itself to wrap accepted handles; destroying the emptied socket
 * closes nothing and keeps the server's connection count right. The new socket's
 * pause() and resume() stop and restart reading on the handle itself.
 */
function readingInto(
  accepted: Socket,
  buffer: Buffer,
  onRead: (bytes: number) => void,
): Socket | undefined {
  const owner = accepted as unknown as { _handle?: { readStart?: unknown } | null };
  const handle = owner._handle;
  if (typeof handle?.readStart !== 'function') return undefined;
  owner._handle = null;
  accepted.destroy();
  const options: SocketConstructorOpts & { handle: unknown; onread: OnReadOpts } = {
    handle,
    readable: true,
    writable: true,
    onread: {
      buffer,
      callback: (bytes: number) => {
        onRead(bytes);
        return true;
      },
    },
  };
  return new Socket(options);
}

/** One request's place in its connection's answer queue. */
class PendingAnswer {
  done = false;
  value: FrameAnswer = null;
  readonly hold: AnswerHold;
  /** The ConnectionInfo its handler gets: the connection's, with this answer's buffers. */
  readonly info: ConnectionInfo;

  constructor(connection: ConnectionInfo, pool: BufferPool) {
    this.hold = new AnswerHold(pool);
    this.info = {
      id: connection.id,
      remoteAddress: connection.remoteAddress,
      answerBuffers: this.hold,
    };
  }
}

class Connection {
  /** The size prefix being read, when a read ended inside it. */
  private readonly prefix = Buffer.alloc(SIZE_PREFIX);
  private prefixFilled = 0;
  /** The frame being read, and how many of its bytes have arrived. */
  private lease: BufferLease | undefined;
  private filled = 0;
  /** Request frames: a producer keeps up to 5 requests in flight, plus the one being read. */
  private readonly pool = new BufferPool();
  /** Answers in request order; each settles to a frame, null (no answer), or an error. */
  private readonly pending: PendingAnswer[] = [];
  private readonly maxInFlight: number;
  private paused = false;
  private closed = false;
  private drainWaiters: Array<() => void> = [];

  constructor(
    readonly socket: Socket,
    private readonly info: ConnectionInfo,
    private readonly options: SocketServerOptions,
    private readonly answerPool: BufferPool,
  ) {
    this.maxInFlight = options.maxInFlight ?? 256;
    socket.on('drain', () => this.maybeResume());
    socket.on('error', (err) => {
      options.logger.debug({ err, connection: info.remoteAddress }, 'connection error');
    });
    socket.on('close', () => {
      this.closed = true;
      this.lease = undefined;
      this.pool.close();
      this.dropAnswers();
      this.notifyDrained();
    });
  }

  get pooledFrameBytes(): number {
    return this.pool.pooledBytes;
  }

  trimIdlePool(): void {
    this.pool.trimIfIdle();
  }

  destroy(): void {
    this.socket.destroy();
  }

  drained(): Promise<void> {
    if (this.pending.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Takes `data[0, length)`, which is only valid during this call (the next read
   * overwrites it): every byte is copied into the size prefix or the current frame,
   * and each frame is dispatched as soon as its last byte is in.
   */
  receive(data: Buffer, length: number): void {
    let pos = 0;
    while (!this.closed) {
      if (this.lease === undefined) {
        if (pos === length) return;
        let size: number;
        if (this.prefixFilled === 0 && length - pos >= SIZE_PREFIX) {
          size = data.readInt32BE(pos);
          pos += SIZE_PREFIX;
        } else {
          const n = Math.min(SIZE_PREFIX - this.prefixFilled, length - pos);
          data.copy(this.prefix, this.prefixFilled, pos, pos + n);
          this.prefixFilled += n;
          pos += n;
          if (this.prefixFilled < SIZE_PREFIX) return;
          this.prefixFilled = 0;
          size = this.prefix.readInt32BE(0);
        }
        if (size < 0 || size > this.options.maxRequestBytes) {
          this.options.logger.warn(
            { connection: this.info.remoteAddress, size, max: this.options.maxRequestBytes },
            'closing connection: request size is negative or above socket.request.max.bytes',
          );
          this.socket.destroy();
          this.closed = true;
          this.dropAnswers();
          return;
        }
        this.lease = this.pool.lend(size);
        this.filled = 0;
      }
      const frame = this.lease.buffer;
      const n = Math.min(frame.length - this.filled, length - pos);
      data.copy(frame, this.filled, pos, pos + n);
      this.filled += n;
      pos += n;
      if (this.filled < frame.length) return;
      const lease = this.lease;
      this.lease = undefined;
      this.dispatch(lease);
    }
  }

  private dispatch(lease: BufferLease): void {
    const slot = new PendingAnswer(this.info, this.answerPool);
    this.pending.push(slot);
    let answer: FrameAnswer | Promise<FrameAnswer>;
    try {
      answer = this.options.handler(lease.buffer, slot.info, lease.release);
    } catch (err) {
      slot.hold.releaseAll();
      this.fail(err);
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (value) => this.settle(slot, value),
        (err) => {
          slot.hold.releaseAll();
          this.fail(err);
        },
      );
    } else {
      this.settle(slot, answer);
    }
    if (this.pending.length >= this.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** The handler is done: its answer joins the queue, or is dropped on a closed connection. */
  private settle(slot: PendingAnswer, value: FrameAnswer): void {
    slot.done = true;
    slot.value = value;
    if (this.closed) slot.hold.releaseAll();
    else this.flushAnswers();
  }

  private flushAnswers(): void {
    if (this.closed) return;
    let wrote = false;
    while (this.pending.length > 0 && this.pending[0]!.done) {
      const { value, hold } = this.pending.shift()!;
      if (value === 'close') {
        // Everything answered before the bad request still reaches the client.
        hold.releaseAll();
        this.closed = true;
        this.dropAnswers();
        if (wrote) this.socket.uncork();
        this.socket.destroySoon();
        this.notifyDrained();
        return;
      }
      const chunks = value === null ? [] : Buffer.isBuffer(value) ? [value] : value;
      if (chunks.length === 0) {
        // Nothing is written, so nothing will read the buffers it borrowed.
        hold.releaseAll();
        continue;
      }
      if (!wrote) this.socket.cork();
      wrote = true;
      const last = chunks.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(chunks[i]!);
      // Writes on a socket complete in order: Node calls this once libuv is done with
      // every chunk of the answer, written or cancelled by a destroy.
      const written = hold.holdsBuffers ? () => hold.releaseAll() : undefined;
      this.socket.write(chunks[last]!, written);
    }
    if (wrote) process.nextTick(() => this.socket.uncork());
    this.maybeResume();
    if (this.pending.length === 0) this.notifyDrained();
  }

  private maybeResume(): void {
    if (!this.paused || this.closed) return;
    if (this.pending.length < this.maxInFlight / 2 && !this.socket.writableNeedDrain) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** A handler that throws has broken an invariant; the connection cannot stay in sync. */
  private fail(err: unknown): void {
    this.options.logger.error(
      { err, connection: this.info.remoteAddress },
      'closing connection: request handler failed',
    );
    this.closed = true;
    this.dropAnswers();
    this.socket.destroy();
    this.notifyDrained();
  }

  /**
   * The connection is closed: answers already made will never be written and give
   * their buffers back; those still being made do so when their handler is done.
   */
  private dropAnswers(): void {
    const dropped = this.pending.splice(0);
    for (const slot of dropped) if (slot.done) slot.hold.releaseAll();
  }

  private notifyDrained(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
