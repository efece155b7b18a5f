/**
 * The stores on source connectors' own offsets topics (`offsets.storage.topic`), shared
 * by everything of one worker that reads or writes a topic: one KafkaOffsetBackingStore
 * per topic, leased. Kafka Connect opens one store per task (and per REST request),
 * each reading the whole topic; here every lease of a topic shares one reader, started
 * by the first lease (which creates the topic like the worker's offsets topic if it is
 * missing: offset.storage.partitions, offset.storage.replication.factor, compacted, or
 * refuses an existing one that is not compacted) and stopped when the last lease is
 * released.
 *
 * Reads are read_committed (kafka-based-log.ts), as an exactly-once task's offsets are
 * written in its transactions. Writes of `set` go through the worker's internal-topic
 * producer (acks=all, idempotent).
 *
 * Called from the worker's task builders and the herders' offset requests, in any
 * order; `stop()` (worker shutdown) stops every reader, leased or not.
 */
import type { Producer } from 'kafkajs';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Logger } from '../../util/logger.ts';
import { KafkaOffsetBackingStore } from './kafka-offset-backing-store.ts';
import type { OffsetBackingStore } from './offset-backing-store.ts';

export interface ConnectorOffsetTopicsOptions {
  client: ClusterClient;
  producer: Producer;
  /** The worker's offset.storage.partitions and offset.storage.replication.factor. */
  partitions: number;
  replicationFactor: number;
  logger: Logger;
}

export interface OffsetTopicLease {
  store: OffsetBackingStore;
  /** Gives the lease back; the topic's reader stops with the last one. Idempotent. */
  release(): Promise<void>;
}

interface Entry {
  store: KafkaOffsetBackingStore;
  started: Promise<void>;
  leases: number;
}

export class ConnectorOffsetTopics {
  private readonly topics = new Map<string, Entry>();

  constructor(private readonly o: ConnectorOffsetTopicsOptions) {}

  /** A store on `topic`, read to its end; throws when the topic cannot be made or read. */
  async acquire(topic: string): Promise<OffsetTopicLease> {
    let entry = this.topics.get(topic);
    if (entry === undefined) {
      const store = new KafkaOffsetBackingStore({
        client: this.o.client,
        producer: this.o.producer,
        topic,
        partitions: this.o.partitions,
        replicationFactor: this.o.replicationFactor,
        logger: this.o.logger,
        configKey: 'offsets.storage.topic',
      });
      const created: Entry = { store, started: store.start(), leases: 0 };
      entry = created;
      this.topics.set(topic, created);
      // A failed start leaves no entry behind: the next lease tries again.
      created.started.catch(() => {
        if (this.topics.get(topic) === created) this.topics.delete(topic);
        void store.stop().catch(() => undefined);
      });
    }
    entry.leases++;
    try {
      await entry.started;
    } catch (e) {
      entry.leases--;
      throw e;
    }
    const held = entry;
    let released = false;
    return {
      store: held.store,
      release: async () => {
        if (released) return;
        released = true;
        held.leases--;
        if (held.leases > 0 || this.topics.get(topic) !== held) return;
        this.topics.delete(topic);
        await held.store.stop();
      },
    };
  }

  /** Stops every topic's reader (worker shutdown); leases still held become inert. */
  async stop(): Promise<void> {
    const entries = [...this.topics.values()];
    this.topics.clear();
    await Promise.all(entries.map((e) => e.started.then(() => e.store.stop()).catch(() => {})));
  }
}
