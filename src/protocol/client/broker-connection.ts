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

const SIZE_PREFIX = 4;

export class BrokerConnection {
  private readonly pending = new Map<number, Pending>();
  private nextCorrelationId = 1;
  private readonly versions = new Map<number, number>();
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private closedError: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    private readonly options: Required<ConnectionOptions>,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
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
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port });
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
    const connection = new BrokerConnection(socket, address, full);
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
      const max = Math.min(schema.maxVersion, range.maxVersion);
      const min = Math.max(schema.minVersion, range.minVersion);
      if (min <= max) this.versions.set(range.apiKey, max);
    }
  }

  /**
   * Chunks are kept as a list and joined only once a whole frame has arrived, so a
   * large Fetch answer in many TCP reads is copied once, not once per read.
   */
  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    for (;;) {
      if (this.bufferedBytes < SIZE_PREFIX) return;
      if (this.chunks[0]!.length < SIZE_PREFIX) this.join();
      const size = this.chunks[0]!.readInt32BE(0);
      if (this.bufferedBytes < SIZE_PREFIX + size) return;
      if (this.chunks[0]!.length < SIZE_PREFIX + size) this.join();
      const head = this.chunks[0]!;
      const frame = head.subarray(SIZE_PREFIX, SIZE_PREFIX + size);
      if (head.length === SIZE_PREFIX + size) this.chunks.shift();
      else this.chunks[0] = head.subarray(SIZE_PREFIX + size);
      this.bufferedBytes -= SIZE_PREFIX + size;
      this.dispatch(frame);
    }
  }

  private join(): void {
    this.chunks = [Buffer.concat(this.chunks, this.bufferedBytes)];
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
