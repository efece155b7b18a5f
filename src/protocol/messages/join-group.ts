/** JoinGroup (key 11). Spec: Kafka's JoinGroupRequest.json / JoinGroupResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const joinGroup = api({
  apiKey: 11,
  name: 'JoinGroup',
  maxVersion: 9,
  flexibleFrom: 6,
  request: [
    f('groupId', 'string', '0+'),
    f('sessionTimeoutMs', 'int32', '0+'),
    // Absent in v0: the session timeout doubles as the rebalance timeout there.
    f('rebalanceTimeoutMs', 'int32', '1+', { default: -1 }),
    f('memberId', 'string', '0+'),
    f('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
    f('protocolType', 'string', '0+'),
    f('protocols', array([f('name', 'string', '0+'), f('metadata', 'bytes', '0+')]), '0+'),
    f('reason', 'string', '8+', { nullable: '8+', default: null }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f('errorCode', 'int16', '0+'),
    f('generationId', 'int32', '0+', { default: -1 }),
    f('protocolType', 'string', '7+', { nullable: '7+', default: null }),
    f('protocolName', 'string', '0+', { nullable: '7+' }),
    f('leader', 'string', '0+'),
    f('skipAssignment', 'bool', '9+', { default: false }),
    f('memberId', 'string', '0+'),
    f(
      'members',
      array([
        f('memberId', 'string', '0+'),
        f('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
        f('metadata', 'bytes', '0+'),
      ]),
      '0+',
    ),
  ],
});
