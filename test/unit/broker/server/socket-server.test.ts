import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FrameHandler, SocketServer } from '../../../../src/broker/server/socket-server.ts';
import { getLogger } from '../../../../src/util/logger.ts';

const servers: SocketServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close(100)));
});

async function start(handler: FrameHandler, maxRequestBytes = 1024): Promise<SocketServer> {
  const server = new SocketServer({
    host: '127.0.0.1',
    port: 0,
    maxRequestBytes,
    handler,
    logger: getLogger('test'),
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

  it('reassembles a frame split across many writes, byte by byte', async () => {
    const server = await start((f) => frame(f));
    const c = await client(server.port);
    const bytes = frame(Buffer.from('hello broker'));
    for (const b of bytes) c.socket.write(Buffer.from([b]));
    const [answer] = await c.next(1);
    expect(answer!.toString()).toBe('hello broker');
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
