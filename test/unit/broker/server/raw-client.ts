/**
 * A minimal Kafka client over one TCP connection for broker tests: sends requests
 * encoded by src/protocol, matches responses by order, and reports when the broker
 * closes the connection.
 */

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { decodeResponse, encodeRequest } from '../../../../src/protocol/framing.ts';
import {
  startTestBroker,
  type TestBroker,
  type TestBrokerOptions,
} from '../../../helpers/broker.ts';

/**
 * One broker for the test file (started before its tests, stopped after them) and
 * RawClients to it, all closed at the end. Later beforeAll hooks see the broker.
 */
export function useRawBroker(options?: TestBrokerOptions): {
  broker(): TestBroker;
  client(): Promise<RawClient>;
} {
  let b: TestBroker | undefined;
  const clients: RawClient[] = [];
  beforeAll(async () => {
    b = await startTestBroker(options);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await b?.stop();
  });
  return {
    broker: () => b as TestBroker,
    async client() {
      const c = await RawClient.connect((b as TestBroker).port);
      clients.push(c);
      return c;
    },
  };
}

export class RawClient {
  private pending = Buffer.alloc(0);
  private readonly waiting: Array<{
    resolve: (frame: Buffer) => void;
    reject: (e: Error) => void;
  }> = [];
  private correlationId = 1;
  readonly closed: Promise<void>;
  isClosed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.pending = Buffer.concat([this.pending, d]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readInt32BE(0)) {
        const size = this.pending.readInt32BE(0);
        const frame = this.pending.subarray(4, 4 + size);
        this.pending = this.pending.subarray(4 + size);
        this.waiting.shift()?.resolve(frame);
      }
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosed = true;
        for (const w of this.waiting.splice(0)) w.reject(new Error('connection closed'));
        resolve();
      }),
    );
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends raw bytes; `expectAnswer` registers a waiter for the next frame. */
  sendRaw(bytes: Buffer, expectAnswer = false): Promise<Buffer> | undefined {
    const answer = expectAnswer
      ? new Promise<Buffer>((resolve, reject) => this.waiting.push({ resolve, reject }))
      : undefined;
    this.socket.write(bytes);
    return answer;
  }

  /** Sends a request and resolves with the decoded response body. */
  async request(apiKey: number, apiVersion: number, body: Message): Promise<Message> {
    const correlationId = this.correlationId++;
    const frame = await this.sendRaw(
      encodeRequest({ apiKey, apiVersion, correlationId, clientId: 'raw-client', body }),
      true,
    )!;
    const decoded = decodeResponse(frame, apiKey, apiVersion);
    if (!decoded.ok) throw new Error(decoded.reason);
    if (decoded.correlationId !== correlationId)
      throw new Error(`correlation id ${decoded.correlationId}, expected ${correlationId}`);
    return decoded.body;
  }

  /** Sends a request that needs no answer (acks=0 produce). */
  send(apiKey: number, apiVersion: number, body: Message): void {
    this.sendRaw(
      encodeRequest({
        apiKey,
        apiVersion,
        correlationId: this.correlationId++,
        clientId: 'raw-client',
        body,
      }),
    );
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * One partition's Fetch (v11), answered at once (maxWaitMs 0). `extra` overrides
 * request fields (isolationLevel defaults to read_committed).
 */
export function fetchPartition(
  c: RawClient,
  topic: string,
  partition: number,
  fetchOffset: number,
  extra: { maxBytes?: number } & Record<string, unknown> = {},
): Promise<Message> {
  const maxBytes = extra.maxBytes ?? 1 << 20;
  return c.request(ApiKey.Fetch, 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic,
        partitions: [
          {
            partition,
            currentLeaderEpoch: -1,
            fetchOffset,
            logStartOffset: -1,
            partitionMaxBytes: maxBytes,
          },
        ],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
    ...extra,
  });
}

/** `n` bytes that differ with `seed` (xorshift32), so a buffer overwritten by another shows. */
export function pseudoRandom(seed: number, n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  let x = (seed + 1) * 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
