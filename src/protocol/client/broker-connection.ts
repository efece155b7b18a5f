/**
 * One client connection to one Kafka broker, speaking the protocol through the shared
 * codec: requests are pipelined, answers matched by correlation id, and each API's
 * version is negotiated once with ApiVersions (the highest version both sides know).
 *
 * Used by the Connect runtime where kafkajs does not fit: reading internal topics
 * without a consumer group and joining the `connect` group protocol. It works the
 * same against the embedded broker and a real Kafka cluster.
 *
 * Failure model: a socket error or close rejects every pending request with a
 * ConnectionClosedError and the connection is dead; callers make a new one. A
 * request that gets no answer in time rejects with a RequestTimeoutError and closes
 * the connection, because later answers on it could no longer be trusted.
 */
import { connect, type Socket } from 'node:net';
import { ApiKey, schemaFor } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import { ErrorCode } from '../error-codes.ts';
import { decodeResponse, encodeRequestChunks } from '../framing.ts';

/**
 * Where this client stops below what the codec can encode, because it does not serve
 * a later version's semantics: Fetch v13+ names topics by id, and the consumer
 * (group-consumer.ts) fetches by name.
 */
const CLIENT_MAX_VERSION: Readonly<Partial<Record<number, number>>> = {
  [ApiKey.Fetch]: 12,
};
export class ConnectionClosedError extends Error {
  constructor(address: string, cause?: unknown) {
    super(`connection to ${address} closed`, { cause });
    this.name = 'ConnectionClosedError';
  }
}

export class RequestTimeoutError extends Error {
  constructor(address: string, apiName: string, timeoutMs: number) {
    super(`${apiName} request to ${address} got no answer within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

export class UnsupportedApiError extends Error {
  constructor(address: string, apiName: string) {
    super(`broker ${address} supports no version of ${apiName} that this client knows`);
    this.name = 'UnsupportedApiError';
  }
}

export interface ConnectionOptions {
  clientId: string;
  /** How long a connection attempt may take. */
  connectTimeoutMs?: number;
  /** Default time to wait for an answer; a request may ask for more (long polls). */
  requestTimeoutMs?: number;
}

interface Pending {
  apiKey: number;
  version: number;
  resolve: (body: Message) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class BrokerConnection {
  private readonly pending = new Map<number, Pending>();
  private nextCorrelationId = 1;
  private readonly versions = new Map<number, number>();
  private closedError: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    private readonly options: Required<ConnectionOptions>,
    reader: FrameReader,
  ) {
    reader.onFrame = (frame) => this.dispatch(frame);
    reader.onError = (err) => {
      socket.destroy();
      this.fail(new ConnectionClosedError(address, err));
    };
    socket.setNoDelay(true);
    socket.on('error', (err) => this.fail(new ConnectionClosedError(address, err)));
    socket.on('close', () => this.fail(new ConnectionClosedError(address)));
  }

  static async connect(
    host: string,
    port: number,
    options: ConnectionOptions,
  ): Promise<BrokerConnection> {
    const full: Required<ConnectionOptions> = {
      connectTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      ...options,
    };
    const address = `${host}:${port}`;
    const reader = new FrameReader();
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({
        host,
        port,
        onread: {
          buffer: () => reader.target(),
          callback: (bytes: number) => {
            reader.read(bytes);
            return true;
          },
        },
      });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`could not connect to ${address} within ${full.connectTimeoutMs} ms`));
      }, full.connectTimeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`could not connect to ${address}: ${err.message}`, { cause: err }));
      });
    });
    const connection = new BrokerConnection(socket, address, full, reader);
    try {
      await connection.negotiateVersions();
    } catch (err) {
      connection.close();
      throw err;
    }
    return connection;
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  /** The negotiated version of an API, or undefined when the broker has none in common. */
  versionFor(apiKey: number): number | undefined {
    return this.versions.get(apiKey);
  }

  /** Sends a request at the negotiated version (or `version`) and resolves with the response body. */
  request(
    apiKey: number,
    body: Message,
    opts: { version?: number; timeoutMs?: number } = {},
  ): Promise<Message> {
    const schema = schemaFor(apiKey);
    const version = opts.version ?? this.versions.get(apiKey);
    if (!schema || version === undefined) {
      return Promise.reject(new UnsupportedApiError(this.address, schema?.name ?? `api ${apiKey}`));
    }
    return this.send(apiKey, version, body, opts.timeoutMs ?? this.options.requestTimeoutMs);
  }

  /** Sends a request that gets no response (Produce with acks=0). */
  sendOneWay(apiKey: number, body: Message): void {
    const version = this.versions.get(apiKey);
    if (version === undefined) throw new UnsupportedApiError(this.address, `api ${apiKey}`);
    const correlationId = this.nextCorrelationId++;
    this.write(
      encodeRequestChunks({
        apiKey,
        apiVersion: version,
        correlationId,
        clientId: this.options.clientId,
        body,
      }),
    );
  }

  /** One vectored write of a frame's chunks (a Produce request's batches are not copied). */
  private write(chunks: Buffer[]): void {
    if (chunks.length === 1) {
      this.socket.write(chunks[0]!);
      return;
    }
    this.socket.cork();
    for (const c of chunks) this.socket.write(c);
    this.socket.uncork();
  }

  close(): void {
    this.socket.destroy();
    this.fail(new ConnectionClosedError(this.address));
  }

  private send(
    apiKey: number,
    version: number,
    body: Message,
    timeoutMs: number,
  ): Promise<Message> {
    if (this.closedError) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId++;
    const frame = encodeRequestChunks({
      apiKey,
      apiVersion: version,
      correlationId,
      clientId: this.options.clientId,
      body,
    });
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        const err = new RequestTimeoutError(
          this.address,
          schemaFor(apiKey)?.name ?? String(apiKey),
          timeoutMs,
        );
        reject(err);
        this.socket.destroy();
        this.fail(err);
      }, timeoutMs);
      this.pending.set(correlationId, { apiKey, version, resolve, reject, timer });
      this.write(frame);
    });
  }

  /** Negotiates each API's version: the highest both sides know, within CLIENT_MAX_VERSION. */
  private async negotiateVersions(): Promise<void> {
    const ours = schemaFor(ApiKey.ApiVersions)!;
    let answer = await this.send(
      ApiKey.ApiVersions,
      ours.maxVersion,
      {},
      this.options.requestTimeoutMs,
    );
    if (answer.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      // KIP-511: the broker answered in v0 format with its own range; retry at v0.
      answer = await this.send(ApiKey.ApiVersions, 0, {}, this.options.requestTimeoutMs);
    }
    if (answer.errorCode !== 0) {
      throw new Error(`ApiVersions to ${this.address} failed with error code ${answer.errorCode}`);
    }
    for (const range of answer.apiKeys as Message[]) {
      const schema = schemaFor(range.apiKey);
      if (!schema) continue;
      const max = Math.min(
        schema.maxVersion,
        range.maxVersion,
        CLIENT_MAX_VERSION[range.apiKey] ?? schema.maxVersion,
      );
      const min = Math.max(schema.minVersion, range.minVersion);
      if (min <= max) this.versions.set(range.apiKey, max);
    }
  }

  private dispatch(frame: Buffer): void {
    if (frame.length < 4) return;
    const correlationId = frame.readInt32BE(0);
    const pending = this.pending.get(correlationId);
    if (!pending) return;
    this.pending.delete(correlationId);
    clearTimeout(pending.timer);
    const decoded = decodeResponse(frame, pending.apiKey, pending.version);
    if (decoded.ok) {
      pending.resolve(decoded.body);
    } else {
      pending.reject(new Error(`malformed response from ${this.address}: ${decoded.reason}`));
    }
  }

  private fail(err: Error): void {
    if (!this.closedError) this.closedError = err;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }
}

/** Frames larger than this are refused as a broken stream (Kafka's own clients cap at 2 GB too). */
const MAX_FRAME_BYTES = 0x7fff_ffff;
const STAGING_BYTES = 64 * 1024;
const SIZE_PREFIX = 4;

/**
 * Cuts a connection's bytes into frames (int32 size, then the frame), for net's
 * `onread`: the socket reads into `target()`, and `read(n)` takes the n bytes it put
 * there. Small frames arrive in a staging buffer and are copied out; once a frame's
 * size is known and it did not all arrive, the rest is read straight into the
 * frame's own buffer, so a Fetch answer of megabytes is never copied on its way in
 * (with 'data' events, the socket's chunks were allocated and then concatenated).
 * Frames handed to `onFrame` are the caller's for good.
 */
export class FrameReader {
  onFrame: (frame: Buffer) => void = () => {};
  onError: (err: Error) => void = () => {};
  private readonly staging = Buffer.allocUnsafeSlow(STAGING_BYTES);
  private start = 0;
  private end = 0;
  private frame: Buffer | null = null;
  private filled = 0;

  /** Where the next read goes. */
  target(): Buffer {
    if (this.frame !== null) return this.frame.subarray(this.filled);
    if (this.end === this.staging.length) {
      // Only a partial size prefix can be left here (anything longer became a frame).
      this.staging.copy(this.staging, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    return this.staging.subarray(this.end);
  }

  /** The last read put `n` bytes into what target() returned. */
  read(n: number): void {
    if (this.frame !== null) {
      this.filled += n;
      if (this.filled < this.frame.length) return;
      const frame = this.frame;
      this.frame = null;
      this.filled = 0;
      this.onFrame(frame);
      return;
    }
    this.end += n;
    for (;;) {
      const available = this.end - this.start;
      if (available < SIZE_PREFIX) break;
      const size = this.staging.readInt32BE(this.start);
      if (size < 0 || size > MAX_FRAME_BYTES) {
        this.start = this.end = 0;
        this.onError(new Error(`a response frame claims ${size} bytes`));
        return;
      }
      const body = this.start + SIZE_PREFIX;
      if (available - SIZE_PREFIX < size) {
        // The rest of this frame is read into the frame itself.
        const frame = Buffer.allocUnsafeSlow(size);
        this.filled = this.staging.copy(frame, 0, body, this.end);
        this.frame = frame;
        this.start = this.end = 0;
        return;
      }
      const frame = Buffer.allocUnsafe(size);
      this.staging.copy(frame, 0, body, body + size);
      this.start = body + size;
      this.onFrame(frame);
    }
    if (this.start === this.end) this.start = this.end = 0;
  }
}
