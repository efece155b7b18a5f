/** DescribeGroups (key 15). Spec: Kafka's DescribeGroupsRequest.json / ...Response.json. */
import { api, array, field as f } from '../schema.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../sentinels.ts';

export const describeGroups = api({
  apiKey: 15,
  name: 'DescribeGroups',
  maxVersion: 5,
  flexibleFrom: 5,
  request: [
    f('groups', array('string'), '0+'),
    f('includeAuthorizedOperations', 'bool', '3+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'groups',
      array([
        f('errorCode', 'int16', '0+'),
        f('groupId', 'string', '0+'),
        f('groupState', 'string', '0+'),
        f('protocolType', 'string', '0+'),
        f('protocolData', 'string', '0+'),
        f(
          'members',
          array([
            f('memberId', 'string', '0+'),
            f('groupInstanceId', 'string', '4+', { nullable: '4+', default: null }),
            f('clientId', 'string', '0+'),
            f('clientHost', 'string', '0+'),
            f('memberMetadata', 'bytes', '0+'),
            f('memberAssignment', 'bytes', '0+'),
          ]),
          '0+',
        ),
        f('authorizedOperations', 'int32', '3+', { default: AUTHORIZED_OPERATIONS_OMITTED }),
      ]),
      '0+',
    ),
  ],
});
