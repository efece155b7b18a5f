/**
 * OffsetForLeaderEpoch (key 23; KIP-101, and KIP-320 for consumers). Spec: Kafka's
 * OffsetForLeaderEpochRequest.json / ...Response.json.
 */
import { api, array, field as f } from '../schema.ts';

export const offsetForLeaderEpoch = api({
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  maxVersion: 4,
  flexibleFrom: 4,
  request: [
    // -1 from a consumer, a broker id from a follower; -2 when the version has none.
    f('replicaId', 'int32', '3+', { default: -2 }),
    f(
      'topics',
      array([
        f('topic', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partition', 'int32', '0+'),
            f('currentLeaderEpoch', 'int32', '2+', { default: -1 }),
            f('leaderEpoch', 'int32', '0+'),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f(
      'topics',
      array([
        f('topic', 'string', '0+'),
        f(
          'partitions',
          array([
            f('errorCode', 'int16', '0+'),
            f('partition', 'int32', '0+'),
            f('leaderEpoch', 'int32', '1+', { default: -1 }),
            f('endOffset', 'int64', '0+', { default: -1n }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
