/**
 * LeaveGroup (key 13). Spec: Kafka's LeaveGroupRequest.json / LeaveGroupResponse.json.
 * v3 replaces the single member id with a batch of members (static membership).
 */
import { api, array, field as f } from '../schema.ts';

export const leaveGroup = api({
  apiKey: 13,
  name: 'LeaveGroup',
  maxVersion: 5,
  flexibleFrom: 4,
  request: [
    f('groupId', 'string', '0+'),
    f('memberId', 'string', '0-2'),
    f(
      'members',
      array([
        f('memberId', 'string', '3+'),
        f('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
        f('reason', 'string', '5+', { nullable: '5+', default: null }),
      ]),
      '3+',
    ),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    f(
      'members',
      array([
        f('memberId', 'string', '3+'),
        f('groupInstanceId', 'string', '3+', { nullable: '3+' }),
        f('errorCode', 'int16', '3+'),
      ]),
      '3+',
    ),
  ],
});
