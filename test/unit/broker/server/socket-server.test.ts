import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type FrameHandler,
  SocketServer,
  type SocketServerOptions,
} from '../../../../src/broker/server/socket-server.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { pseudoRandom } from './raw-client.ts';

const servers: SocketServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close(100)));
});

async function start(
  handler: FrameHandler,
  maxRequestBytes = 1024,
  options: Partial<SocketServerOptions> = {},
): Promise<SocketServer> {
  const server = new SocketServer({
    host: '127.0.0.1',
    port: 0,
    maxRequestBytes,
    handler,
    logger: getLogger('test'),
    ...options,
  });
  await server.listen();
  servers.push(server);
  return server;
}

function frame(payload: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
}

/** A client that collects size-prefixed answers. */
function client(port: number): Promise<{
  socket: Socket;
  answers: Buffer[];
  next: (n: number) => Promise<Buffer[]>;
  closed: Promise<void>;
}> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const answers: Buffer[] = [];
    let pending = Buffer.alloc(0);
    let waiter: (() => void) | undefined;
    socket.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const n = pending.readInt32BE(0);
        answers.push(pending.subarray(4, 4 + n));
        pending = pending.subarray(4 + n);
      }
      waiter?.();
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    const next = (n: number) =>
      new Promise<Buffer[]>((r) => {
        const check = () => {
          if (answers.length >= n) r(answers.slice(0, n));
        };
        waiter = check;
        check();
      });
    socket.once('connect', () => resolve({ socket, answers, next, closed }));
    socket.once('error', reject);
  });
}

describe('SocketServer', () => {
  it('answers pipelined requests in request order even when later ones finish first', async () => {
    const server = await start(async (f) => {
      const delay = f.readUInt8(0);
      await new Promise((r) => setTimeout(r, delay));
      return frame(f);
    });
    const c = await client(server.port);
    c.socket.write(
      Buffer.concat([
        frame(Buffer.from([30, 1])),
        frame(Buffer.from([0, 2])),
        frame(Buffer.from([10, 3])),
      ]),
    );
    const answers = await c.next(3);
    expect(answers.map((a) => a[1])).toEqual([1, 2, 3]);
  });

  it('sends nothing for a null answer and keeps later answers in order', async () => {
    const server = await start((f) => (f[0] === 0 ? null : frame(f)));
    const c = await client(server.port);
    c.socket.write(
      Buffer.concat([frame(Buffer.from([1])), frame(Buffer.from([0])), frame(Buffer.from([2]))]),
    );
    const answers = await c.next(2);
    expect(answers.map((a) => a[0])).toEqual([1, 2]);
  });

  it('closes only the connection that sends an oversize frame', async () => {
    const server = await start((f) => frame(f), 16);
    const bad = await client(server.port);
    const good = await client(server.port);
    bad.socket.write(frame(Buffer.alloc(17)));
    await bad.closed;
    good.socket.write(frame(Buffer.from('still here')));
    const [answer] = await good.next(1);
    expect(answer!.toString()).toBe('still here');
  });

  it('closes a connection that sends a negative size', async () => {
    const server = await start((f) => frame(f));
    const bad = await client(server.port);
    bad.socket.write(Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3]));
    await bad.closed;
  });
});

const digest = (b: Buffer): Buffer => createHash('sha256').update(b).digest();

/** Answers every frame with its digest, computed when the answer is made. */
const digestHandler: FrameHandler = (f, _c, release) => {
  const answer = frame(digest(f));
  release();
  return answer;
};

const readModes: Array<[string, Partial<SocketServerOptions>]> = [
  ['the shared read buffer', {}],
  ['a 7-byte read buffer', { readBufferBytes: 7 }],
  ["'data' events", { readBufferBytes: 0 }],
];

describe.each(readModes)('SocketServer framing, reading with %s', (_mode, reading) => {
  it('splits one write of 200 frames of 0 to 3000 bytes into exactly those frames', async () => {
    const payloads = Array.from({ length: 200 }, (_, i) => pseudoRandom(i, (i * 397) % 3001));
    const server = await start(digestHandler, 4096, reading);
    const c = await client(server.port);
    c.socket.write(Buffer.concat(payloads.map(frame)));
    const answers = await c.next(payloads.length);
    expect(answers.map((a) => a.toString('hex'))).toEqual(
      payloads.map((p) => digest(p).toString('hex')),
    );
  });

  it('reassembles frames written byte by byte, size prefixes included', async () => {
    const payloads = [Buffer.from('hello broker'), Buffer.alloc(0), pseudoRandom(1, 300)];
    const server = await start(digestHandler, 1024, reading);
    const c = await client(server.port);
    for (const b of Buffer.concat(payloads.map(frame))) c.socket.write(Buffer.from([b]));
    const answers = await c.next(payloads.length);
    expect(answers).toEqual(payloads.map(digest));
  });

  it('reassembles frames larger than any one read, between small ones', async () => {
    const payloads = [
      pseudoRandom(1, 700_000),
      pseudoRandom(2, 5),
      pseudoRandom(3, 300_000),
      pseudoRandom(4, 1_000_000),
    ];
    const server = await start(digestHandler, 1_000_000, reading);
    const c = await client(server.port);
    c.socket.write(Buffer.concat(payloads.map(frame)));
    const answers = await c.next(payloads.length);
    expect(answers).toEqual(payloads.map(digest));
  });

  it('closes a connection whose size prefix, split across writes, exceeds the limit', async () => {
    const server = await start(digestHandler, 16, reading);
    const c = await client(server.port);
    c.socket.write(frame(Buffer.from('fits')));
    for (const b of frame(Buffer.alloc(17)).subarray(0, 4)) c.socket.write(Buffer.from([b]));
    await c.closed;
  });

  it('stops reading while maxInFlight answers are pending, and resumes as they are written', async () => {
    const total = 40;
    const payloads = Array.from({ length: total }, (_, i) => pseudoRandom(i, 100_000));
    let hold = true;
    const held: Array<() => void> = [];
    let seen = 0;
    const server = await start(
      (f, c, release) => {
        seen++;
        if (!hold) return digestHandler(f, c, release);
        return new Promise((resolve) => held.push(() => resolve(digestHandler(f, c, release))));
      },
      200_000,
      { ...reading, maxInFlight: 4 },
    );
    const c = await client(server.port);
    for (const p of payloads) c.socket.write(frame(p));
    // vi.waitFor gives up after 1 s by default, too soon on a loaded machine.
    await vi.waitFor(() => expect(seen).toBeGreaterThanOrEqual(4), { timeout: 30_000 });
    // Time for the rest to arrive if reading had not paused.
    await new Promise((r) => setTimeout(r, 100));
    // A read of up to 256 KiB already taken when the limit was reached is still framed.
    expect(seen).toBeLessThanOrEqual(8);
    hold = false;
    for (const answer of held.splice(0)) answer();
    const answers = await c.next(total);
    expect(answers).toEqual(payloads.map(digest));
  });
});

describe('SocketServer frame reuse', () => {
  it('never lends a frame the handler has not released, and does reuse released ones', async () => {
    const seen: Array<{ frame: Buffer; copy: Buffer; kept: boolean }> = [];
    const server = await start((f, c, release) => {
      const kept = f[0]! < 16;
      seen.push({ frame: f, copy: Buffer.from(f), kept });
      return kept ? frame(Buffer.from('kept')) : digestHandler(f, c, release);
    }, 100_000);
    const c = await client(server.port);
    const payloads = Array.from({ length: 100 }, (_, i) => {
      // Above 32 KiB: smaller frames are not pooled (util/buffer-pool.ts).
      const p = pseudoRandom(i, 40_000);
      p[0] = i % 10 === 0 ? i % 16 : 16 + (p[0]! % 240);
      return p;
    });
    // One frame per write: frames reach the handler over many reads.
    for (const p of payloads) c.socket.write(frame(p));
    const answers = await c.next(payloads.length);
    expect(answers).toEqual(payloads.map((p) => (p[0]! < 16 ? Buffer.from('kept') : digest(p))));
    seen.forEach((k, i) => {
      if (!k.kept) return;
      expect(k.frame.equals(k.copy)).toBe(true);
      expect(seen.slice(i + 1).some((later) => later.frame.buffer === k.frame.buffer)).toBe(false);
    });
    // The 90 released frames took turns with one buffer at a time; each kept frame took
    // the buffer of its turn out of circulation.
    expect(new Set(seen.filter((k) => !k.kept).map((k) => k.frame.buffer)).size).toBe(10);
  });

  it('does not reuse the frames of answers still pending', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const held = new Set<ArrayBufferLike>();
    const server = await start(async (f, c, release) => {
      // The first frame is answered at once, so its buffer waits in the pool.
      if (f[0] === 0) return digestHandler(f, c, release);
      held.add(f.buffer);
      await gate;
      return digestHandler(f, c, release);
    }, 100_000);
    const c = await client(server.port);
    const payloads = Array.from({ length: 7 }, (_, i) => {
      const p = pseudoRandom(i, 40_000);
      p[0] = i === 0 ? 0 : 1;
      return p;
    });
    c.socket.write(frame(payloads[0]!));
    await c.next(1);
    for (const p of payloads.slice(1)) c.socket.write(frame(p));
    await vi.waitFor(() => expect(held.size).toBe(6), { timeout: 30_000 });
    open();
    expect(await c.next(7)).toEqual(payloads.map(digest));
  });

  it("drops a connection's pooled frames when it closes", async () => {
    const server = await start(digestHandler, 100_000);
    const c = await client(server.port);
    c.socket.write(frame(pseudoRandom(1, 50_000)));
    await c.next(1);
    expect(server.pooledFrameBytes).toBeGreaterThanOrEqual(50_000);
    c.socket.destroy();
    await vi.waitFor(() => expect(server.pooledFrameBytes).toBe(0), { timeout: 30_000 });
  });

  it('drops the pooled frames of a connection idle for poolIdleMs, which then still works', async () => {
    const server = await start(digestHandler, 100_000, { poolIdleMs: 20 });
    const c = await client(server.port);
    const payloads = [pseudoRandom(1, 50_000), pseudoRandom(2, 60_000)];
    c.socket.write(frame(payloads[0]!));
    await c.next(1);
    await vi.waitFor(() => expect(server.pooledFrameBytes).toBe(0), { timeout: 30_000 });
    c.socket.write(frame(payloads[1]!));
    expect(await c.next(2)).toEqual(payloads.map(digest));
  });

  it('closes only the connection whose handler throws', async () => {
    const server = await start((f, c, release) => {
      if (f.toString() === 'boom') throw new Error('broken invariant');
      return digestHandler(f, c, release);
    });
    const bad = await client(server.port);
    const good = await client(server.port);
    bad.socket.write(Buffer.concat([frame(Buffer.from('boom')), frame(Buffer.from('after'))]));
    await bad.closed;
    expect(bad.answers).toEqual([]);
    good.socket.write(frame(Buffer.from('still here')));
    expect(await good.next(1)).toEqual([digest(Buffer.from('still here'))]);
  });
});
