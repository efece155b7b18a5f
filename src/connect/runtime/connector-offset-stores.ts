/**
 * Which offset store a source connector, its tasks and its REST offset requests use:
 * Kafka's Worker.offsetStoreFor{Regular,ExactlyOnce}Source{Task,Connector}, which
 * agree here (this worker's internal readers are read_committed in every mode):
 *   - no `offsets.storage.topic`, or the worker's own offset.storage.topic named
 *     again: the worker's global store alone (under exactly-once the task's
 *     transactions write the offsets to that topic);
 *   - another topic: that topic as the primary store (created if missing, like the
 *     worker's offsets topic), the worker's store as the fallback for reads and the
 *     secondary for writes (connector-offset-backing-store.ts says which writes).
 * Standalone mode has no connector offsets topics: Kafka ignores the key there; this
 * worker refuses it (validation says so first, see exactly-once.ts).
 *
 * A lease is held for as long as the store is used: a task for its life, a REST
 * request or a connector's offset read for one call (`onDemand`).
 */
import type { Logger } from '../../util/logger.ts';
import type { ConnectorConfig } from '../api/connector.ts';
import { ConnectException } from '../api/errors.ts';
import { ConnectorOffsetBackingStore } from '../storage/connector-offset-backing-store.ts';
import type { ConnectorOffsetTopics } from '../storage/connector-offset-topics.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import { standaloneOffsetsTopicError } from './exactly-once.ts';

export interface OffsetStoreLease {
  store: ConnectorOffsetBackingStore;
  release(): Promise<void>;
}

export interface ConnectorOffsetStoresOptions {
  workerStore: OffsetBackingStore;
  /** The worker's offset.storage.topic; null in standalone mode (offsets in a file). */
  workerTopic: string | null;
  /** Connector offsets topics; null where they are not permitted (standalone). */
  topics: ConnectorOffsetTopics | null;
  logger: Logger;
}

export class ConnectorOffsetStores {
  constructor(private readonly o: ConnectorOffsetStoresOptions) {}

  /** The connector's own offsets topic, or null when its offsets are the worker's. */
  ownTopic(config: ConnectorConfig): string | null {
    const topic = config['offsets.storage.topic'];
    if (topic === undefined || topic === null || topic === '') return null;
    if (this.o.topics === null) throw new ConnectException(standaloneOffsetsTopicError);
    return topic === this.o.workerTopic ? null : topic;
  }

  /** The store of `connector`'s offsets; `owner` names the user in warnings. */
  async acquire(owner: string, config: ConnectorConfig): Promise<OffsetStoreLease> {
    const topic = this.ownTopic(config);
    if (topic === null) {
      return {
        store: new ConnectorOffsetBackingStore({
          primaryOffsetsTopic: this.o.workerTopic ?? '',
          workerStore: this.o.workerStore,
          connectorStore: null,
          logger: this.o.logger,
          owner,
        }),
        release: async () => {},
      };
    }
    const lease = await (this.o.topics as ConnectorOffsetTopics).acquire(topic);
    return {
      store: new ConnectorOffsetBackingStore({
        primaryOffsetsTopic: topic,
        workerStore: this.o.workerStore,
        connectorStore: lease.store,
        logger: this.o.logger,
        owner,
      }),
      release: () => lease.release(),
    };
  }

  /** Runs `use` on the connector's store, leased for the call. */
  async withStore<T>(
    owner: string,
    config: ConnectorConfig,
    use: (store: ConnectorOffsetBackingStore) => Promise<T>,
  ): Promise<T> {
    const lease = await this.acquire(owner, config);
    try {
      return await use(lease.store);
    } finally {
      await lease.release();
    }
  }

  /** An OffsetBackingStore that leases the connector's store for each call. */
  onDemand(owner: string, config: ConnectorConfig): OffsetBackingStore {
    return {
      start: async () => {},
      stop: async () => {},
      get: (keys) => this.withStore(owner, config, (s) => s.get(keys)),
      set: (entries) => this.withStore(owner, config, (s) => s.set(entries)),
      entries: () => this.withStore(owner, config, (s) => s.entries()),
    };
  }
}
