/**
 * Fetch (key 1). Spec: Kafka's FetchRequest.json / FetchResponse.json (v12 is the
 * first flexible version; v13 replaces topic names with topic ids and is not here).
 * Topic names end at v12 and ReplicaId at v14 (v15 moves it into ReplicaState), as in
 * the spec, so widening maxVersion cannot silently keep them on the wire.
 */
import { api, array, field as f, struct } from '../schema.ts';

export const fetch = api({
  apiKey: 1,
  name: 'Fetch',
  maxVersion: 12,
  flexibleFrom: 12,
  request: [
    f('clusterId', 'string', '12+', { nullable: '12+', default: null, tag: 0 }),
    f('replicaId', 'int32', '0-14', { default: -1 }),
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
        f(
          'partitions',
          array([
            f('partition', 'int32', '0+'),
            f('currentLeaderEpoch', 'int32', '9+', { default: -1 }),
            f('fetchOffset', 'int64', '0+'),
            f('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
            f('logStartOffset', 'int64', '5+', { default: -1n }),
            f('partitionMaxBytes', 'int32', '0+'),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f(
      'forgottenTopicsData',
      array([f('topic', 'string', '7-12'), f('partitions', array('int32'), '7+')]),
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
  ],
});
