/**
 * ListTransactions (key 66, KIP-664). Spec: Kafka's ListTransactionsRequest.json /
 * ...Response.json: flexible from v0; v1 adds the duration filter.
 */
import { api, array, field as f } from '../schema.ts';

export const listTransactions = api({
  apiKey: 66,
  name: 'ListTransactions',
  maxVersion: 1,
  flexibleFrom: 0,
  request: [
    f('stateFilters', array('string'), '0+'),
    f('producerIdFilters', array('int64'), '0+'),
    f('durationFilter', 'int64', '1+', { default: -1n }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('unknownStateFilters', array('string'), '0+'),
    f(
      'transactionStates',
      array([
        f('transactionalId', 'string', '0+'),
        f('producerId', 'int64', '0+'),
        f('transactionState', 'string', '0+'),
      ]),
      '0+',
    ),
  ],
});
