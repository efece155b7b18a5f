/**
 * DescribeTopicPartitions (key 75, KIP-966): Metadata's topic part, paged by a cursor,
 * with the eligible leader replicas. Spec: Kafka's DescribeTopicPartitionsRequest.json /
 * ...Response.json: one version, flexible.
 */
import { api, array, field as f, struct } from '../schema.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../sentinels.ts';

/** The request's default page size, Kafka's max.request.partition.size.limit default. */
const DEFAULT_PARTITION_LIMIT = 2000;

const cursor = struct([f('topicName', 'string', '0+'), f('partitionIndex', 'int32', '0+')]);

export const describeTopicPartitions = api({
  apiKey: 75,
  name: 'DescribeTopicPartitions',
  maxVersion: 0,
  flexibleFrom: 0,
  request: [
    // An empty list asks for every topic.
    f('topics', array([f('name', 'string', '0+')]), '0+'),
    f('responsePartitionLimit', 'int32', '0+', { default: DEFAULT_PARTITION_LIMIT }),
    f('cursor', cursor, '0+', { nullable: '0+', default: null }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'topics',
      array([
        f('errorCode', 'int16', '0+'),
        f('name', 'string', '0+', { nullable: '0+' }),
        f('topicId', 'uuid', '0+'),
        f('isInternal', 'bool', '0+', { default: false }),
        f(
          'partitions',
          array([
            f('errorCode', 'int16', '0+'),
            f('partitionIndex', 'int32', '0+'),
            f('leaderId', 'int32', '0+'),
            f('leaderEpoch', 'int32', '0+', { default: -1 }),
            f('replicaNodes', array('int32'), '0+'),
            f('isrNodes', array('int32'), '0+'),
            f('eligibleLeaderReplicas', array('int32'), '0+', { nullable: '0+', default: null }),
            f('lastKnownElr', array('int32'), '0+', { nullable: '0+', default: null }),
            f('offlineReplicas', array('int32'), '0+'),
          ]),
          '0+',
        ),
        f('topicAuthorizedOperations', 'int32', '0+', { default: AUTHORIZED_OPERATIONS_OMITTED }),
      ]),
      '0+',
    ),
    f('nextCursor', cursor, '0+', { nullable: '0+', default: null }),
  ],
});
