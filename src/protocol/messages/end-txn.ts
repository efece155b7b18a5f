/** EndTxn (key 26). Spec: Kafka's EndTxnRequest.json / EndTxnResponse.json. */
import { api, field as f } from '../schema.ts';

export const endTxn = api({
  apiKey: 26,
  name: 'EndTxn',
  maxVersion: 3,
  flexibleFrom: 3,
  request: [
    f('transactionalId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    // true commits, false aborts.
    f('committed', 'bool', '0+'),
  ],
  response: [f('throttleTimeMs', 'int32', '0+'), f('errorCode', 'int16', '0+')],
});
