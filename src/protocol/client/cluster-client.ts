/**
 * A small cluster-aware client over BrokerConnection: bootstrap, metadata, one
 * connection per broker, partition leaders and group coordinators. Enough for the
 * Connect runtime's internal-topic reader, its `connect` group membership, the
 * source tasks' producer (producer.ts) and the transactional producer
 * (transactional-producer.ts, which finds its coordinator with key type 1); consume and
 * admin go through kafkajs.
 *
 * Retries: a request that fails because its connection died, or because the broker
 * answered with a retriable "wrong node" error, is the caller's to retry after
 * `invalidate()`; the client only reconnects lazily on the next request.
 */
import { ApiKey } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import { ErrorCode, errorByCode } from '../error-codes.ts';
import { BrokerConnection, type ConnectionOptions } from './broker-connection.ts';

export interface BrokerAddress {
  nodeId: number;
  host: string;
  port: number;
}

export interface TopicMetadata {
  name: string;
  errorCode: number;
  /** __consumer_offsets, __transaction_state. */
  internal: boolean;
  partitions: Array<{ partition: number; leader: number; errorCode: number }>;
}

/**
 * A request on a client that was closed. Never retriable: retry loops rethrow it, so
 * a task stopped while it waits for the broker stops instead of retrying until its
 * delivery timeout.
 */
export class ClientClosedError extends Error {
  constructor() {
    super('client is closed');
    this.name = 'ClientClosedError';
  }
}

/** Whether a retry loop must give up on `e`: a non-retriable broker answer or a closed client. */
export function notRetriable(e: unknown): boolean {
  return (e instanceof KafkaResponseError && !e.retriable) || e instanceof ClientClosedError;
}

export class KafkaResponseError extends Error {
  readonly code: number;
  readonly retriable: boolean;
  constructor(code: number, context: string, message?: string | null) {
    const info = errorByCode(code);
    super(`${context}: ${info.name}${message ? ` (${message})` : ''}: ${info.message}`);
    this.name = 'KafkaResponseError';
    this.code = code;
    this.retriable = info.retriable;
  }
}

/** Parses `host:port,host:port` (bootstrap.servers), accepting a PLAINTEXT:// prefix. */
export function parseBootstrap(servers: string | string[]): Array<{ host: string; port: number }> {
  const list = Array.isArray(servers) ? servers : servers.split(',');
  return list
    .map((s) => s.trim().replace(/^[A-Za-z_]+:\/\//, ''))
    .filter((s) => s !== '')
    .map((s) => {
      const at = s.lastIndexOf(':');
      if (at <= 0) throw new Error(`bootstrap server '${s}' must be host:port`);
      const port = Number(s.slice(at + 1));
      if (!Number.isInteger(port) || port <= 0 || port > 65535)
        throw new Error(`bootstrap server '${s}' has a bad port`);
      return { host: s.slice(0, at).replace(/^\[|\]$/g, ''), port };
    });
}

export class ClusterClient {
  private readonly bootstrap: Array<{ host: string; port: number }>;
  private brokers = new Map<number, BrokerAddress>();
  private readonly connections = new Map<string, Promise<BrokerConnection>>();
  private leaders = new Map<string, number>();
  private closed = false;

  constructor(
    bootstrapServers: string | string[],
    private readonly options: ConnectionOptions,
  ) {
    this.bootstrap = parseBootstrap(bootstrapServers);
    if (this.bootstrap.length === 0) throw new Error('bootstrap.servers is empty');
  }

  /**
   * A second client to the same cluster with its own connections. Requests on one
   * connection are answered in order, so a long-polling Fetch would hold up every
   * other request behind it: long polls get a client of their own.
   */
  fork(): ClusterClient {
    return new ClusterClient(
      this.bootstrap.map((b) => `${b.host}:${b.port}`),
      this.options,
    );
  }

  /** A live connection to any broker: a known one, else the bootstrap list in order. */
  async anyConnection(): Promise<BrokerConnection> {
    if (this.closed) throw new ClientClosedError();
    const candidates = [...this.brokers.values(), ...this.bootstrap];
    let lastError: unknown;
    for (const c of candidates) {
      try {
        return await this.connectionTo(c.host, c.port);
      } catch (err) {
        lastError = err;
      }
    }
    throw new Error(
      `no broker of ${this.bootstrap.map((b) => `${b.host}:${b.port}`).join(',')} is reachable`,
      {
        cause: lastError,
      },
    );
  }

  async connectionToNode(nodeId: number): Promise<BrokerConnection> {
    let broker = this.brokers.get(nodeId);
    if (!broker) {
      await this.metadata([]);
      broker = this.brokers.get(nodeId);
      if (!broker) throw new Error(`broker ${nodeId} is not in the cluster metadata`);
    }
    return this.connectionTo(broker.host, broker.port);
  }

  /** Metadata for topics (null: all topics). Also refreshes brokers and leaders. */
  async metadata(
    topics: string[] | null,
    allowAutoTopicCreation = false,
  ): Promise<TopicMetadata[]> {
    const conn = await this.anyConnection();
    const answer = await conn.request(ApiKey.Metadata, {
      topics: topics === null ? null : topics.map((name) => ({ name })),
      allowAutoTopicCreation,
    });
    this.brokers = new Map(
      (answer.brokers as Message[]).map((b) => [
        b.nodeId,
        { nodeId: b.nodeId, host: b.host, port: b.port },
      ]),
    );
    const result: TopicMetadata[] = [];
    for (const t of answer.topics as Message[]) {
      const partitions = (t.partitions as Message[]).map((p) => ({
        partition: p.partitionIndex as number,
        leader: p.leaderId as number,
        errorCode: p.errorCode as number,
      }));
      for (const p of partitions) this.leaders.set(`${t.name}\u0000${p.partition}`, p.leader);
      result.push({
        name: t.name,
        errorCode: t.errorCode,
        internal: t.isInternal === true,
        partitions,
      });
    }
    return result;
  }

  async leaderConnection(topic: string, partition: number): Promise<BrokerConnection> {
    let leader = this.leaders.get(`${topic}\u0000${partition}`);
    if (leader === undefined || leader < 0) {
      await this.metadata([topic]);
      leader = this.leaders.get(`${topic}\u0000${partition}`);
      if (leader === undefined || leader < 0) {
        throw new KafkaResponseError(
          ErrorCode.LEADER_NOT_AVAILABLE,
          `leader of ${topic}-${partition}`,
        );
      }
    }
    return this.connectionToNode(leader);
  }

  /**
   * The coordinator of a group (keyType 0) or of a transactional id (keyType 1), found
   * with FindCoordinator. Key type 1 needs FindCoordinator v1+; a broker without it is
   * refused by name rather than asked for a group of that name.
   */
  async coordinatorFor(groupId: string, keyType: 0 | 1 = 0): Promise<BrokerConnection> {
    const conn = await this.anyConnection();
    const version = conn.versionFor(ApiKey.FindCoordinator) ?? 0;
    if (keyType === 1 && version < 1) {
      throw new Error(
        `broker ${conn.address} serves FindCoordinator v${version} only, which cannot find a transaction coordinator (v1+ needed)`,
      );
    }
    const answer = await conn.request(ApiKey.FindCoordinator, {
      key: groupId,
      keyType,
      coordinatorKeys: [groupId],
    });
    const found = version >= 4 ? (answer.coordinators as Message[])[0]! : answer;
    if (found.errorCode !== 0)
      throw new KafkaResponseError(
        found.errorCode,
        `FindCoordinator(${groupId})`,
        found.errorMessage,
      );
    return this.connectionTo(found.host, found.port);
  }

  /** Forgets cached leaders after a NOT_LEADER-style answer or a dead connection. */
  invalidate(): void {
    this.leaders.clear();
    for (const [key, pending] of this.connections) {
      pending.then(
        (c) => {
          if (c.closed) this.connections.delete(key);
        },
        () => this.connections.delete(key),
      );
    }
  }

  close(): void {
    this.closed = true;
    for (const pending of this.connections.values())
      pending.then(
        (c) => c.close(),
        () => {},
      );
    this.connections.clear();
  }

  private connectionTo(host: string, port: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new ClientClosedError());
    const key = `${host}:${port}`;
    const existing = this.connections.get(key);
    if (existing) {
      return existing.then((c) => {
        if (!c.closed) return c;
        if (this.connections.get(key) === existing) this.connections.delete(key);
        return this.connectionTo(host, port);
      });
    }
    const created = BrokerConnection.connect(host, port, this.options);
    this.connections.set(key, created);
    created.catch(() => {
      if (this.connections.get(key) === created) this.connections.delete(key);
    });
    return created;
  }
}
