/** AddOffsetsToTxn (key 25). Spec: Kafka's AddOffsetsToTxnRequest.json / ...Response.json. */
import { api, field as f } from '../schema.ts';

export const addOffsetsToTxn = api({
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  maxVersion: 3,
  flexibleFrom: 3,
  request: [
    f('transactionalId', 'string', '0+'),
    f('producerId', 'int64', '0+'),
    f('producerEpoch', 'int16', '0+'),
    f('groupId', 'string', '0+'),
  ],
  response: [f('throttleTimeMs', 'int32', '0+'), f('errorCode', 'int16', '0+')],
});
