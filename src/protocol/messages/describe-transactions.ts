/**
 * DescribeTransactions (key 65, KIP-664). Spec: Kafka's DescribeTransactionsRequest.json /
 * ...Response.json: one version, flexible.
 */
import { api, array, field as f } from '../schema.ts';

export const describeTransactions = api({
  apiKey: 65,
  name: 'DescribeTransactions',
  maxVersion: 0,
  flexibleFrom: 0,
  request: [f('transactionalIds', array('string'), '0+')],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'transactionStates',
      array([
        f('errorCode', 'int16', '0+'),
        f('transactionalId', 'string', '0+'),
        f('transactionState', 'string', '0+'),
        f('transactionTimeoutMs', 'int32', '0+'),
        f('transactionStartTimeMs', 'int64', '0+'),
        f('producerId', 'int64', '0+'),
        f('producerEpoch', 'int16', '0+'),
        f(
          'topics',
          array([f('topic', 'string', '0+'), f('partitions', array('int32'), '0+')]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
