/**
 * AddPartitionsToTxn (key 24). Spec: Kafka's AddPartitionsToTxnRequest.json /
 * ...Response.json, versions 0-4. v0-v3 are the clients' form, one transaction per
 * request; v4 (flexible) batches transactions, as brokers send it, with VerifyOnly.
 * The partition results share one shape across versions (`results` of
 * `{ partitionIndex, errorCode }`, Kafka's ResultsByPartition / PartitionErrorCode).
 * (v5 only adds the TRANSACTION_ABORTABLE error of KIP-890 and is not here.)
 */
import { api, array, field as f } from '../schema.ts';

const topic = (v: string) => [f('name', 'string', v), f('partitions', array('int32'), v)];

const topicResult = (v: string) => [
  f('name', 'string', v),
  f('results', array([f('partitionIndex', 'int32', v), f('errorCode', 'int16', v)]), v),
];

export const addPartitionsToTxn = api({
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  maxVersion: 4,
  flexibleFrom: 3,
  request: [
    f(
      'transactions',
      array([
        f('transactionalId', 'string', '4+'),
        f('producerId', 'int64', '4+'),
        f('producerEpoch', 'int16', '4+'),
        f('verifyOnly', 'bool', '4+', { default: false }),
        f('topics', array(topic('4+')), '4+'),
      ]),
      '4+',
    ),
    f('transactionalId', 'string', '0-3'),
    f('producerId', 'int64', '0-3'),
    f('producerEpoch', 'int16', '0-3'),
    f('topics', array(topic('0-3')), '0-3'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '4+'),
    f(
      'resultsByTransaction',
      array([
        f('transactionalId', 'string', '4+'),
        f('topicResults', array(topicResult('4+')), '4+'),
      ]),
      '4+',
    ),
    f('results', array(topicResult('0-3')), '0-3'),
  ],
});
