/**
 * A TCP proxy between a Kafka client and the broker that can drop a response: it
 * forwards the request, and when the broker's answer comes back it closes the
 * client's connection instead of delivering it. The client sees a lost connection
 * after the broker has acted on the request, which is exactly the case retries of an
 * idempotent producer must survive. The upstream port is asked for per connection,
 * so the broker behind the proxy may restart on another port.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DroppingProxyOptions {
  /** The broker's port for a new connection (may wait, e.g. for a restart). */
  upstreamPort: () => number | Promise<number>;
  /** Called for each response to a request of `apiKey`; true drops it. */
  drop: (apiKey: number) => boolean;
}

export class DroppingProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly options: DroppingProxyOptions) {
    this.server = createServer((client) => void this.accept(client));
  }

  listen(): Promise<void> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        this.port = (this.server.address() as { port: number }).port;
        resolve();
      }),
    );
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(s: Socket): Socket {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
    s.on('error', () => {});
    return s;
  }

  private async accept(client: Socket): Promise<void> {
    this.track(client);
    client.pause();
    const upstream = this.track(
      connect({ host: '127.0.0.1', port: await this.options.upstreamPort() }),
    );
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', closeBoth);
    upstream.once('close', closeBoth);
    // Requests in order: the api key of each, to know what a response answers.
    const apiKeys: number[] = [];
    frames(client, (frame) => {
      apiKeys.push(frame.readInt16BE(4));
      upstream.write(frame);
    });
    frames(upstream, (frame) => {
      const apiKey = apiKeys.shift();
      if (apiKey !== undefined && this.options.drop(apiKey)) closeBoth();
      else client.write(frame);
    });
    client.resume();
  }
}

/** Calls `onFrame` with each whole size-prefixed frame (prefix included). */
function frames(socket: Socket, onFrame: (frame: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = 4 + pending.readInt32BE(0);
      onFrame(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
  });
}
