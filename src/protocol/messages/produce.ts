/**
 * Produce (key 0). Spec: Kafka's ProduceRequest.json / ProduceResponse.json. v9 is the
 * first flexible version; v10 adds the tagged CurrentLeader per partition and
 * NodeEndpoints (KIP-951), v11 only tells the broker the client knows
 * TRANSACTION_ABORTABLE (KIP-890).
 */
import { api, array, field as f, struct } from '../schema.ts';

export const produce = api({
  apiKey: 0,
  name: 'Produce',
  maxVersion: 11,
  flexibleFrom: 9,
  request: [
    f('transactionalId', 'string', '3+', { nullable: '3+', default: null }),
    f('acks', 'int16', '0+'),
    f('timeoutMs', 'int32', '0+'),
    f(
      'topicData',
      array([
        f('name', 'string', '0+'),
        f(
          'partitionData',
          array([f('index', 'int32', '0+'), f('records', 'records', '0+', { nullable: '0+' })]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
  response: [
    f(
      'responses',
      array([
        f('name', 'string', '0+'),
        f(
          'partitionResponses',
          array([
            f('index', 'int32', '0+'),
            f('errorCode', 'int16', '0+'),
            f('baseOffset', 'int64', '0+'),
            f('logAppendTimeMs', 'int64', '2+', { default: -1n }),
            f('logStartOffset', 'int64', '5+', { default: -1n }),
            f(
              'recordErrors',
              array([
                f('batchIndex', 'int32', '8+'),
                f('batchIndexErrorMessage', 'string', '8+', { nullable: '8+', default: null }),
              ]),
              '8+',
            ),
            f('errorMessage', 'string', '8+', { nullable: '8+', default: null }),
            f(
              'currentLeader',
              struct([
                f('leaderId', 'int32', '10+', { default: -1 }),
                f('leaderEpoch', 'int32', '10+', { default: -1 }),
              ]),
              '10+',
              { tag: 0 },
            ),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'nodeEndpoints',
      array([
        f('nodeId', 'int32', '10+'),
        f('host', 'string', '10+'),
        f('port', 'int32', '10+'),
        f('rack', 'string', '10+', { nullable: '10+', default: null }),
      ]),
      '10+',
      { tag: 0 },
    ),
  ],
});
