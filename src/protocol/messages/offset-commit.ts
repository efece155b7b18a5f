/** OffsetCommit (key 8). Spec: Kafka's OffsetCommitRequest.json / OffsetCommitResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const offsetCommit = api({
  apiKey: 8,
  name: 'OffsetCommit',
  // v9 (KIP-848): generationId carries a consumer group member's epoch; same fields.
  maxVersion: 9,
  flexibleFrom: 8,
  request: [
    f('groupId', 'string', '0+'),
    f('generationId', 'int32', '1+', { default: -1 }),
    f('memberId', 'string', '1+', { default: '' }),
    f('groupInstanceId', 'string', '7+', { nullable: '7+', default: null }),
    f('retentionTimeMs', 'int64', '2-4', { default: -1n }),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('committedOffset', 'int64', '0+'),
            f('committedLeaderEpoch', 'int32', '6+', { default: -1 }),
            f('commitTimestamp', 'int64', '1', { default: -1n }),
            f('committedMetadata', 'string', '0+', { nullable: '0+' }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([f('partitionIndex', 'int32', '0+'), f('errorCode', 'int16', '0+')]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
