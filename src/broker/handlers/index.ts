/**
 * The broker's handlers by api key (except the group APIs, which live in group/ and
 * are added by broker.ts when present). ApiVersions is answered by the router itself,
 * from this table.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import { handleAlterConfigs, handleIncrementalAlterConfigs } from './alter-configs.ts';
import type { BrokerServices } from './broker-services.ts';
import { handleCreatePartitions } from './create-partitions.ts';
import { handleCreateTopics } from './create-topics.ts';
import { handleDeleteRecords } from './delete-records.ts';
import { handleDeleteTopics } from './delete-topics.ts';
import { handleDescribeCluster } from './describe-cluster.ts';
import { handleDescribeConfigs } from './describe-configs.ts';
import { handleDescribeLogDirs } from './describe-log-dirs.ts';
import { handleDescribeTopicPartitions } from './describe-topic-partitions.ts';
import { handleFetch } from './fetch.ts';
import type { RequestHandler } from './handler.ts';
import { handleInitProducerId } from './init-producer-id.ts';
import { handleListOffsets } from './list-offsets.ts';
import { handleMetadata } from './metadata.ts';
import { handleOffsetForLeaderEpoch } from './offset-for-leader-epoch.ts';
import { handleProduce } from './produce.ts';
import { handleSaslHandshake } from './sasl-handshake.ts';
import { txnHandlers } from './txn/index.ts';

export const brokerHandlers: ReadonlyMap<number, RequestHandler<BrokerServices>> = new Map([
  [ApiKey.Produce, handleProduce],
  [ApiKey.Fetch, handleFetch],
  [ApiKey.ListOffsets, handleListOffsets],
  [ApiKey.Metadata, handleMetadata],
  [ApiKey.SaslHandshake, handleSaslHandshake],
  [ApiKey.CreateTopics, handleCreateTopics],
  [ApiKey.DeleteTopics, handleDeleteTopics],
  [ApiKey.DeleteRecords, handleDeleteRecords],
  [ApiKey.InitProducerId, handleInitProducerId],
  [ApiKey.DescribeConfigs, handleDescribeConfigs],
  [ApiKey.AlterConfigs, handleAlterConfigs],
  [ApiKey.CreatePartitions, handleCreatePartitions],
  [ApiKey.IncrementalAlterConfigs, handleIncrementalAlterConfigs],
  [ApiKey.OffsetForLeaderEpoch, handleOffsetForLeaderEpoch],
  [ApiKey.DescribeLogDirs, handleDescribeLogDirs],
  [ApiKey.DescribeCluster, handleDescribeCluster],
  [ApiKey.DescribeTopicPartitions, handleDescribeTopicPartitions],
  ...txnHandlers,
]);
