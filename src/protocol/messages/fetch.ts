/**
 * Fetch (key 1). Spec: Kafka's FetchRequest.json / FetchResponse.json (v12 is the
 * first flexible version; v13 replaces topic names with topic ids). Topic names end
 * at v12 and ReplicaId at v14 (v15 moves it into the tagged ReplicaState), as in the
 * spec; v16 adds the tagged NodeEndpoints of new leaders, v17 the replica's directory.
 */
import { api, array, field as f, struct } from '../schema.ts';

export const fetch = api({
  apiKey: 1,
  name: 'Fetch',
  maxVersion: 17,
  flexibleFrom: 12,
  request: [
    f('clusterId', 'string', '12+', { nullable: '12+', default: null, tag: 0 }),
    f('replicaId', 'int32', '0-14', { default: -1 }),
    f(
      'replicaState',
      struct([
        f('replicaId', 'int32', '15+', { default: -1 }),
        f('replicaEpoch', 'int64', '15+', { default: -1n }),
      ]),
      '15+',
      { tag: 1 },
    ),
    f('maxWaitMs', 'int32', '0+'),
    f('minBytes', 'int32', '0+'),
    f('maxBytes', 'int32', '3+', { default: 0x7fffffff }),
    f('isolationLevel', 'int8', '4+', { default: 0 }),
    f('sessionId', 'int32', '7+', { default: 0 }),
    f('sessionEpoch', 'int32', '7+', { default: -1 }),
    f(
      'topics',
      array([
        f('topic', 'string', '0-12'),
        f('topicId', 'uuid', '13+'),
        f(
          'partitions',
          array([
            f('partition', 'int32', '0+'),
            f('currentLeaderEpoch', 'int32', '9+', { default: -1 }),
            f('fetchOffset', 'int64', '0+'),
            f('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
            f('logStartOffset', 'int64', '5+', { default: -1n }),
            f('partitionMaxBytes', 'int32', '0+'),
            f('replicaDirectoryId', 'uuid', '17+', { tag: 0 }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f(
      'forgottenTopicsData',
      array([
        f('topic', 'string', '7-12'),
        f('topicId', 'uuid', '13+'),
        f('partitions', array('int32'), '7+'),
      ]),
      '7+',
    ),
    f('rackId', 'string', '11+', { default: '' }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '7+'),
    f('sessionId', 'int32', '7+', { default: 0 }),
    f(
      'responses',
      array([
        f('topic', 'string', '0-12'),
        f('topicId', 'uuid', '13+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('errorCode', 'int16', '0+'),
            f('highWatermark', 'int64', '0+'),
            f('lastStableOffset', 'int64', '4+', { default: -1n }),
            f('logStartOffset', 'int64', '5+', { default: -1n }),
            f(
              'divergingEpoch',
              struct([
                f('epoch', 'int32', '12+', { default: -1 }),
                f('endOffset', 'int64', '12+', { default: -1n }),
              ]),
              '12+',
              { tag: 0 },
            ),
            f(
              'currentLeader',
              struct([
                f('leaderId', 'int32', '12+', { default: -1 }),
                f('leaderEpoch', 'int32', '12+', { default: -1 }),
              ]),
              '12+',
              { tag: 1 },
            ),
            f(
              'snapshotId',
              struct([
                f('endOffset', 'int64', '12+', { default: -1n }),
                f('epoch', 'int32', '12+', { default: -1 }),
              ]),
              '12+',
              { tag: 2 },
            ),
            f(
              'abortedTransactions',
              array([f('producerId', 'int64', '4+'), f('firstOffset', 'int64', '4+')]),
              '4+',
              { nullable: '4+' },
            ),
            f('preferredReadReplica', 'int32', '11+', { default: -1 }),
            f('records', 'records', '0+', { nullable: '0+' }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f(
      'nodeEndpoints',
      array([
        f('nodeId', 'int32', '16+'),
        f('host', 'string', '16+'),
        f('port', 'int32', '16+'),
        f('rack', 'string', '16+', { nullable: '16+', default: null }),
      ]),
      '16+',
      { tag: 0 },
    ),
  ],
});
