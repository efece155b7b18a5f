/** TxnOffsetCommit (key 28). Spec: Kafka's TxnOffsetCommitRequest.json / ...Response.json. */
import { api, array, field as f } from '../schema.ts';

export const txnOffsetCommit = api({
  apiKey: 28,
  name: 'TxnOffsetCommit',
  maxVersion: 3,
  flexibleFrom: 3,
  request: [
    f('transactionalId', 'string', '0+'),
    f('groupId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('generationId', 'int32', '3+', { default: -1 }),
    f('memberId', 'string', '3+', { default: '' }),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('committedOffset', 'int64', '0+'),
            f('committedLeaderEpoch', 'int32', '2+', { default: -1 }),
            f('committedMetadata', 'string', '0+', { nullable: '0+' }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
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
