/**
 * When the socket server gives answer buffers back (answer-buffers.ts): only once the
 * socket has written them, and exactly once whatever becomes of the answer. The pool
 * here scribbles over each buffer as it comes back, so a buffer given back while its
 * write was pending would reach the client scribbled.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type FrameHandler,
  SocketServer,
  type SocketServerOptions,
} from '../../../../src/broker/server/socket-server.ts';
import { type BufferLease, BufferPool } from '../../../../src/util/buffer-pool.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { pseudoRandom } from './raw-client.ts';

/** Counts the releases of every lease it lends, and scribbles a buffer when it comes back. */
class WatchedPool extends BufferPool {
  readonly releases = new Map<Buffer, number>();

  override lend(length: number): BufferLease {
    const lease = super.lend(length);
    if (!lease.pooled) return lease;
    this.releases.set(lease.buffer, 0);
    return {
      buffer: lease.buffer,
      pooled: true,
      release: () => {
        const n = this.releases.get(lease.buffer)! + 1;
        this.releases.set(lease.buffer, n);
        if (n === 1) lease.buffer.fill(0xaa);
        lease.release();
      },
    };
  }

  /** Every lease lent so far was released exactly once. */
  expectAllReleasedOnce(): void {
    expect([...this.releases.values()].filter((n) => n !== 1)).toEqual([]);
    expect(this.lentBuffers).toBe(0);
  }
}

const servers: SocketServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close(100)));
});

async function start(handler: FrameHandler, options: Partial<SocketServerOptions> = {}) {
  const pool = new WatchedPool();
  const server = new SocketServer({
    host: '127.0.0.1',
    port: 0,
    maxRequestBytes: 1024,
    handler,
    logger: getLogger('test'),
    answerBufferPool: pool,
    // No trimming of idle sizes: on a loaded machine a trim could land between the
    // last release and the reuse this file checks.
    poolIdleMs: 3_600_000,
    ...options,
  });
  await server.listen();
  servers.push(server);
  return { server, pool };
}

const REQUEST = (payload: Buffer) => {
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
};

/**
 * A client that collects answers (size prefix removed). It reads with `onread`, so
 * pause() and resume() stop and start reading on the socket itself. (A client reading
 * with 'data' events, paused before it connected and resumed later, now and then
 * stopped reading for good under a loaded machine, its kernel buffer full: a stall in
 * the test's client, seen with `ss`, while the server still had answers queued.)
 */
function client(port: number) {
  const answers: Buffer[] = [];
  // Chunks joined only once a whole answer is in: answers are megabytes.
  let chunks: Buffer[] = [];
  let length = 0;
  let need = 4;
  const take = (d: Buffer) => {
    chunks.push(d);
    length += d.length;
    while (length >= need) {
      let pending = Buffer.concat(chunks, length);
      if (need === 4) need = 4 + pending.readInt32BE(0);
      if (length < need) {
        chunks = [pending];
        break;
      }
      answers.push(pending.subarray(4, need));
      pending = pending.subarray(need);
      chunks = [pending];
      length = pending.length;
      need = 4;
    }
  };
  const socket = connect({
    host: '127.0.0.1',
    port,
    onread: {
      buffer: Buffer.alloc(256 * 1024),
      // The buffer is reused for the next read: keep a copy.
      callback: (n: number, buf: Uint8Array) => {
        take(Buffer.from(buf.subarray(0, n)));
        return true;
      },
    },
  });
  sockets.push(socket);
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, answers, closed };
}

const PART_BYTES = 1 << 20;
/** Waits long enough for a loaded machine: these wait on sockets, not on timers. */
const patiently = { timeout: 30_000 };

/** Part `i` of the answer to request `seed`: 1 MB of a pseudo-random 4099-byte run, repeated. */
const part = (seed: number, i: number, into: Buffer = Buffer.allocUnsafe(PART_BYTES)): Buffer =>
  into.fill(pseudoRandom(seed * 3 + i, 4099));

/** The answer to request `seed`: three parts of 1 MB, each its own chunk. */
const expected = (seed: number) => Buffer.concat([0, 1, 2].map((i) => part(seed, i)));

/**
 * Answers request `[seed]` with `expected(seed)`, read into three borrowed buffers
 * and passed to the socket uncopied, as a Fetch answer's records are.
 */
const lendingAnswer: FrameHandler = (frame, connection, release) => {
  const seed = frame[0]!;
  release();
  const size = Buffer.alloc(4);
  size.writeInt32BE(3 * PART_BYTES);
  const parts = [0, 1, 2].map((i) => part(seed, i, connection.answerBuffers!.lend(PART_BYTES)));
  return [size, ...parts];
};

describe('SocketServer answer buffers', () => {
  it("gives an answer's buffers back only once the socket has written it, and exactly once", async () => {
    const { server, pool } = await start(lendingAnswer);
    const c = client(server.port);
    c.socket.pause();
    for (let seed = 0; seed < 10; seed++) c.socket.write(REQUEST(Buffer.from([seed])));
    // 30 MB of answers cannot all be in the kernel's buffers of a client that does not read.
    await vi.waitFor(() => expect(pool.releases.size).toBe(30), patiently);
    await new Promise((r) => setTimeout(r, 50));
    expect(pool.lentBuffers).toBeGreaterThan(0);
    c.socket.resume();
    // The length alone: a failed expect on the array would print 30 MB of buffers, on
    // every poll, and that formatting, not the socket, took most of this test's time.
    await vi.waitFor(() => expect(c.answers.length).toBe(10), patiently);
    expect(c.answers.map((a, seed) => a.equals(expected(seed)))).toEqual(Array(10).fill(true));
    pool.expectAllReleasedOnce();
    // What comes back is lent again.
    const used = new Set([...pool.releases.keys()].map((b) => b.buffer));
    expect(used.has(pool.lend(PART_BYTES).buffer.buffer)).toBe(true);
  });

  it('gives back exactly once the buffers of answers pending when the client goes away', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const { server, pool } = await start((frame, connection, release) => {
      // 0: answered at once; 1: still being made when the connection closes; 2: made,
      // but queued behind a 1.
      if (frame[0] !== 1) return lendingAnswer(frame, connection, release);
      connection.answerBuffers!.lend(PART_BYTES);
      return gate.then(() => {
        connection.answerBuffers!.lend(PART_BYTES);
        return lendingAnswer(frame, connection, release);
      });
    });
    const c = client(server.port);
    c.socket.pause();
    c.socket.write(Buffer.concat([0, 0, 0, 0, 1, 2, 2].map((k) => REQUEST(Buffer.from([k])))));
    await vi.waitFor(() => expect(pool.releases.size).toBe(4 * 3 + 1 + 2 * 3), patiently);
    c.socket.destroy();
    await vi.waitFor(() => expect(server.pooledFrameBytes).toBe(0), patiently);
    // The answers written or queued are back; the one still being made holds its buffer.
    await vi.waitFor(() => expect(pool.lentBuffers).toBe(1), patiently);
    open();
    await vi.waitFor(() => expect(pool.lentBuffers).toBe(0), patiently);
    pool.expectAllReleasedOnce();
    expect(pool.pooledBytes).toBeLessThanOrEqual(32 << 20);
    // The pool still lends each buffer to one answer at a time.
    const d = client(server.port);
    d.socket.write(Buffer.concat([5, 6, 7].map((k) => REQUEST(Buffer.from([k])))));
    await vi.waitFor(() => expect(d.answers.length).toBe(3), patiently);
    expect(d.answers.map((a, i) => a.equals(expected(5 + i)))).toEqual([true, true, true]);
    pool.expectAllReleasedOnce();
  });

  it('gives back at once the buffers of an answer with nothing to write, and of a failed handler', async () => {
    const { server, pool } = await start((frame, connection, release) => {
      connection.answerBuffers!.lend(PART_BYTES);
      if (frame[0] === 0) return null;
      if (frame[0] === 1) return 'close';
      if (frame[0] === 2) throw new Error('broken invariant');
      return lendingAnswer(frame, connection, release);
    });
    const quiet = client(server.port);
    quiet.socket.write(REQUEST(Buffer.from([0])));
    await vi.waitFor(() => expect(pool.releases.size).toBe(1), patiently);
    expect(pool.lentBuffers).toBe(0);
    for (const k of [1, 2]) {
      const c = client(server.port);
      c.socket.write(REQUEST(Buffer.from([k])));
      await c.closed;
    }
    await vi.waitFor(() => expect(pool.releases.size).toBe(3), patiently);
    pool.expectAllReleasedOnce();
  });

  it('lends unpooled buffers once the server is closed', async () => {
    const { server, pool } = await start(lendingAnswer);
    await server.close(0);
    servers.length = 0;
    const lease = pool.lend(PART_BYTES);
    expect(lease.pooled).toBe(false);
  });
});
