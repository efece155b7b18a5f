/**
 * AddPartitionsToTxn (key 24). Spec: Kafka's AddPartitionsToTxnRequest.json /
 * ...Response.json, versions 0-3 (v4 batches transactions for brokers and is not here).
 */
import { api, array, field as f } from '../schema.ts';

export const addPartitionsToTxn = api({
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  maxVersion: 3,
  flexibleFrom: 3,
  request: [
    f('transactionalId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('topics', array([f('name', 'string', '0+'), f('partitions', array('int32'), '0+')]), '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'results',
      array([
        f('name', 'string', '0+'),
        f(
          'results',
          array([f('partitionIndex', 'int32', '0+'), f('errorCode', 'int16', '0+')]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
