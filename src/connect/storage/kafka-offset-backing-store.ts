/**
 * Source offsets in a compacted offsets topic (the worker's offset.storage.topic, or a
 * source connector's own offsets.storage.topic), as Kafka Connect keeps them: key `["<connector>",{source partition}]`, value the offset JSON,
 * a null value deleting it. Records are partitioned by key with the producer's default
 * (murmur2) partitioner, so Kafka Connect and this runtime place keys alike.
 *
 * `set` resolves once the broker acknowledged every entry with acks=all: that is the
 * moment source offsets count as committed. `get` and `entries` first read the topic
 * to its end, so they see writes of other workers too.
 */
import type { Producer } from 'kafkajs';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Logger } from '../../util/logger.ts';
import { startInternalLog } from './internal-topic.ts';
import type { KafkaBasedLog } from './kafka-based-log.ts';
import type { OffsetBackingStore } from './offset-backing-store.ts';

/**
 * Pause of the tailing read between fetches: get() and entries() read to the end
 * first, so nothing acts on the tail's progress, and with exactly-once every
 * transaction appends here, which would otherwise wake the tail twice (the offsets
 * record, then the commit marker).
 */
const TAIL_PAUSE_MS = 1000;

export interface KafkaOffsetStoreOptions {
  client: ClusterClient;
  producer: Producer;
  topic: string;
  partitions: number;
  replicationFactor: number;
  logger: Logger;
  /** The key that named the topic, for errors (default: the worker's offset.storage.topic). */
  configKey?: string;
}

export class KafkaOffsetBackingStore implements OffsetBackingStore {
  private readonly data = new Map<string, string>();
  private log: KafkaBasedLog | undefined;

  constructor(private readonly options: KafkaOffsetStoreOptions) {}

  async start(): Promise<void> {
    this.log = await startInternalLog(
      this.options.client,
      {
        topic: this.options.topic,
        configKey: this.options.configKey ?? 'offset.storage.topic',
        partitions: this.options.partitions,
        replicationFactor: this.options.replicationFactor,
      },
      {
        logger: this.options.logger,
        tailPauseMs: TAIL_PAUSE_MS,
        onRecord: (r) => {
          if (r.key === null) return;
          const key = r.key.toString('utf8');
          if (r.value === null) this.data.delete(key);
          else this.data.set(key, r.value.toString('utf8'));
        },
      },
    );
  }

  async stop(): Promise<void> {
    await this.log?.stop();
  }

  async get(keys: readonly string[]): Promise<Map<string, string>> {
    await this.log?.readToEnd();
    const found = new Map<string, string>();
    for (const k of keys) {
      const v = this.data.get(k);
      if (v !== undefined) found.set(k, v);
    }
    return found;
  }

  async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    if (entries.size === 0) return;
    await this.options.producer.send({
      topic: this.options.topic,
      acks: -1,
      messages: [...entries].map(([key, value]) => ({ key, value })),
    });
    // Visible to this worker's reads at once; the read loop applies the same values again.
    for (const [key, value] of entries) {
      if (value === null) this.data.delete(key);
      else this.data.set(key, value);
    }
  }

  async entries(): Promise<Map<string, string>> {
    await this.log?.readToEnd();
    return new Map(this.data);
  }
}
