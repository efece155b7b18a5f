/** InitProducerId (key 22). Spec: Kafka's InitProducerIdRequest.json / ...Response.json. */
import { api, field as f } from '../schema.ts';

export const initProducerId = api({
  apiKey: 22,
  name: 'InitProducerId',
  maxVersion: 4,
  flexibleFrom: 2,
  request: [
    f('transactionalId', 'string', '0+', { nullable: '0+' }),
    f('transactionTimeoutMs', 'int32', '0+'),
    // v3+: the current id and epoch, so a producer can bump its epoch after an error.
    f('producerId', 'int64', '3+', { default: -1n }),
    f('producerEpoch', 'int16', '3+', { default: -1 }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('producerId', 'int64', '0+', { default: -1n }),
    f('producerEpoch', 'int16', '0+'),
  ],
});
