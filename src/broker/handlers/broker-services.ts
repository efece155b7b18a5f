/**
 * What the request handlers work with: the broker's collaborators, composed once by
 * broker.ts. The shape includes GroupHandlerServices (coordinator, logs, nodeId,
 * advertisedHost, port) so the group handlers take the same object.
 *
 * `port` is filled in once the listener is bound (port 0 picks one), before the
 * first request can arrive.
 */

import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { GroupCoordinator } from '../group/group-coordinator.ts';
import type { LogManager } from '../log/log-manager.ts';
import type { TopicTrafficMetrics } from '../metrics/broker-metrics.ts';
import type { ProducerIdManager } from '../producer/producer-id-manager.ts';
import type { ProducerStateStore } from '../producer/producer-state-store.ts';
import type { TransactionCoordinator } from '../txn/transaction-coordinator.ts';

export interface BrokerServices {
  coordinator: GroupCoordinator;
  logs: LogManager;
  nodeId: number;
  advertisedHost: string;
  port: number;
  clusterId: string;
  /** Broker-level values keyed by Kafka's names, every key of brokerConfigDefs present. */
  config: Readonly<Record<string, unknown>>;
  producerIds: ProducerIdManager;
  producerStates: ProducerStateStore;
  transactions: TransactionCoordinator;
  clock: Clock;
  logger: Logger;
  /** Aborted when the broker starts stopping: long polls answer at once. */
  stopping: AbortSignal;
  /** Bytes and records in and out per topic (broker-metrics.ts); absent in some tests. */
  metrics?: TopicTrafficMetrics;
}
