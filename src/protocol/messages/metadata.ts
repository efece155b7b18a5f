/** Metadata (key 3). Spec: Kafka's MetadataRequest.json / MetadataResponse.json. */
import { api, array, field as f } from '../schema.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../sentinels.ts';

export const metadata = api({
  apiKey: 3,
  name: 'Metadata',
  maxVersion: 12,
  flexibleFrom: 9,
  request: [
    // v0 has no null: an empty array means all topics there. v1+: null = all, [] = none.
    f(
      'topics',
      array([f('topicId', 'uuid', '10+'), f('name', 'string', '0+', { nullable: '10+' })]),
      '0+',
      { nullable: '1+' },
    ),
    f('allowAutoTopicCreation', 'bool', '4+', { default: true }),
    f('includeClusterAuthorizedOperations', 'bool', '8-10', { default: false }),
    f('includeTopicAuthorizedOperations', 'bool', '8+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'brokers',
      array([
        f('nodeId', 'int32', '0+'),
        f('host', 'string', '0+'),
        f('port', 'int32', '0+'),
        f('rack', 'string', '1+', { nullable: '1+', default: null }),
      ]),
      '0+',
    ),
    f('clusterId', 'string', '2+', { nullable: '2+', default: null }),
    f('controllerId', 'int32', '1+', { default: -1 }),
    f(
      'topics',
      array([
        f('errorCode', 'int16', '0+'),
        f('name', 'string', '0+', { nullable: '12+' }),
        f('topicId', 'uuid', '10+'),
        f('isInternal', 'bool', '1+', { default: false }),
        f(
          'partitions',
          array([
            f('errorCode', 'int16', '0+'),
            f('partitionIndex', 'int32', '0+'),
            f('leaderId', 'int32', '0+'),
            f('leaderEpoch', 'int32', '7+', { default: -1 }),
            f('replicaNodes', array('int32'), '0+'),
            f('isrNodes', array('int32'), '0+'),
            f('offlineReplicas', array('int32'), '5+'),
          ]),
          '0+',
        ),
        f('topicAuthorizedOperations', 'int32', '8+', { default: AUTHORIZED_OPERATIONS_OMITTED }),
      ]),
      '0+',
    ),
    f('clusterAuthorizedOperations', 'int32', '8-10', { default: AUTHORIZED_OPERATIONS_OMITTED }),
  ],
});
