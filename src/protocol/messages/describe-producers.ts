/**
 * DescribeProducers (key 61, KIP-664). Spec: Kafka's DescribeProducersRequest.json /
 * ...Response.json: one version, flexible.
 */
import { api, array, field as f } from '../schema.ts';

export const describeProducers = api({
  apiKey: 61,
  name: 'DescribeProducers',
  maxVersion: 0,
  flexibleFrom: 0,
  request: [
    f(
      'topics',
      array([f('name', 'string', '0+'), f('partitionIndexes', array('int32'), '0+')]),
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
          array([
            f('partitionIndex', 'int32', '0+'),
            f('errorCode', 'int16', '0+'),
            f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
            f(
              'activeProducers',
              array([
                f('producerId', 'int64', '0+'),
                f('producerEpoch', 'int32', '0+'),
                f('lastSequence', 'int32', '0+', { default: -1 }),
                f('lastTimestamp', 'int64', '0+', { default: -1n }),
                f('coordinatorEpoch', 'int32', '0+'),
                f('currentTxnStartOffset', 'int64', '0+', { default: -1n }),
              ]),
              '0+',
            ),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
