/** Heartbeat (key 12). Spec: Kafka's HeartbeatRequest.json / HeartbeatResponse.json. */
import { api, field as f } from '../schema.ts';

export const heartbeat = api({
  apiKey: 12,
  name: 'Heartbeat',
  maxVersion: 4,
  flexibleFrom: 4,
  request: [
    f('groupId', 'string', '0+'),
    f('generationId', 'int32', '0+'),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
  ],
  response: [f('throttleTimeMs', 'int32', '1+'), f('errorCode', 'int16', '0+')],
});
