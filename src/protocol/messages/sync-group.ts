/** SyncGroup (key 14). Spec: Kafka's SyncGroupRequest.json / SyncGroupResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const syncGroup = api({
  apiKey: 14,
  name: 'SyncGroup',
  maxVersion: 5,
  flexibleFrom: 4,
  request: [
    f('groupId', 'string', '0+'),
    f('generationId', 'int32', '0+'),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    f('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    // Only the leader sends assignments; followers send an empty array.
    f('assignments', array([f('memberId', 'string', '0+'), f('assignment', 'bytes', '0+')]), '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    f('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    f('assignment', 'bytes', '0+'),
  ],
});
