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
 * Frames are handed to the handler as views of the received chunk when the whole
 * frame sits in one chunk (the common case), so large Produce payloads are not copied.
 *
 * Single-threaded: everything here runs on the broker thread's event loop.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../util/logger.ts';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
}

/**
 * A full response frame (with its size prefix) as one Buffer or as chunks, null for
 * no answer, or 'close' to close the connection after the answers before it.
 */
export type FrameAnswer = Buffer | readonly Buffer[] | null | 'close';

/** Answers one request frame (without its size prefix). */
export type FrameHandler = (
  frame: Buffer,
  connection: ConnectionInfo,
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
}

const SIZE_PREFIX = 4;

export class SocketServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;
  private boundPort = 0;

  constructor(private readonly options: SocketServerOptions) {
    this.server = createServer({ noDelay: true }, (socket) => this.accept(socket));
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
        resolve();
      });
    });
  }

  /**
   * Stops accepting, lets pending answers of open connections finish for up to
   * `graceMs`, then closes every connection.
   */
  async close(graceMs = 2000): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.race([
      Promise.all([...this.connections].map((c) => c.drained())),
      new Promise((r) => setTimeout(r, graceMs).unref()),
    ]);
    for (const c of this.connections) c.destroy();
    await closed;
  }

  private accept(socket: Socket): void {
    const info: ConnectionInfo = {
      id: this.nextConnectionId++,
      remoteAddress: `${socket.remoteAddress}:${socket.remotePort}`,
    };
    const connection = new Connection(socket, info, this.options);
    this.connections.add(connection);
    socket.once('close', () => {
      this.connections.delete(connection);
      this.options.onClose?.(info);
    });
  }
}

class Connection {
  /** Received bytes not yet framed; usually zero or one chunk. */
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Answers in request order; each settles to a frame, null (no answer), or an error. */
  private readonly pending: Array<{ done: boolean; value: FrameAnswer }> = [];
  private readonly maxInFlight: number;
  private paused = false;
  private closed = false;
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly socket: Socket,
    private readonly info: ConnectionInfo,
    private readonly options: SocketServerOptions,
  ) {
    this.maxInFlight = options.maxInFlight ?? 256;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.maybeResume());
    socket.on('error', (err) => {
      options.logger.debug({ err, connection: info.remoteAddress }, 'connection error');
    });
    socket.on('close', () => {
      this.closed = true;
      this.notifyDrained();
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  drained(): Promise<void> {
    if (this.pending.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private onData(chunk: Buffer): void {
    if (this.buffered === 0) {
      this.chunks = [chunk];
    } else {
      this.chunks.push(chunk);
    }
    this.buffered += chunk.length;
    this.extractFrames();
  }

  private extractFrames(): void {
    while (!this.closed && this.buffered >= SIZE_PREFIX) {
      let head = this.chunks[0]!;
      if (head.length < SIZE_PREFIX) head = this.coalesce();
      const size = head.readInt32BE(0);
      if (size < 0 || size > this.options.maxRequestBytes) {
        this.options.logger.warn(
          { connection: this.info.remoteAddress, size, max: this.options.maxRequestBytes },
          'closing connection: request size is negative or above socket.request.max.bytes',
        );
        this.socket.destroy();
        this.closed = true;
        return;
      }
      const total = SIZE_PREFIX + size;
      if (this.buffered < total) return;
      if (head.length < total) head = this.coalesce();
      const frame = head.subarray(SIZE_PREFIX, total);
      if (head.length === total) {
        this.chunks.shift();
      } else {
        this.chunks[0] = head.subarray(total);
      }
      this.buffered -= total;
      this.dispatch(frame);
    }
  }

  /** Joins buffered chunks into one; only frames that straddle reads pay for this. */
  private coalesce(): Buffer {
    const joined =
      this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [joined];
    return joined;
  }

  private dispatch(frame: Buffer): void {
    const slot = { done: false, value: null as FrameAnswer };
    this.pending.push(slot);
    let answer: FrameAnswer | Promise<FrameAnswer>;
    try {
      answer = this.options.handler(frame, this.info);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (value) => {
          slot.done = true;
          slot.value = value;
          this.flushAnswers();
        },
        (err) => this.fail(err),
      );
    } else {
      slot.done = true;
      slot.value = answer;
      this.flushAnswers();
    }
    if (this.pending.length >= this.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private flushAnswers(): void {
    if (this.closed) return;
    let wrote = false;
    while (this.pending.length > 0 && this.pending[0]!.done) {
      const { value } = this.pending.shift()!;
      if (value === 'close') {
        // Everything answered before the bad request still reaches the client.
        this.closed = true;
        this.pending.length = 0;
        if (wrote) this.socket.uncork();
        this.socket.destroySoon();
        this.notifyDrained();
        return;
      }
      if (value !== null) {
        if (!wrote) this.socket.cork();
        wrote = true;
        if (Buffer.isBuffer(value)) {
          this.socket.write(value);
        } else {
          for (const chunk of value) this.socket.write(chunk);
        }
      }
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
    this.socket.destroy();
    this.notifyDrained();
  }

  private notifyDrained(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
