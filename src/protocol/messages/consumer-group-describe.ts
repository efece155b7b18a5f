/**
 * ConsumerGroupDescribe (key 69, KIP-848): the consumer group protocol's own describe,
 * with epochs, subscriptions and current and target assignments. Spec: Kafka's
 * ConsumerGroupDescribeRequest.json / ...Response.json; one version, flexible.
 */
import { api, array, field as f, struct } from '../schema.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../sentinels.ts';

const assignment = struct([
  f(
    'topicPartitions',
    array([
      f('topicId', 'uuid', '0+'),
      f('topicName', 'string', '0+'),
      f('partitions', array('int32'), '0+'),
    ]),
    '0+',
  ),
]);

export const consumerGroupDescribe = api({
  apiKey: 69,
  name: 'ConsumerGroupDescribe',
  maxVersion: 0,
  flexibleFrom: 0,
  request: [f('groupIds', array('string'), '0+'), f('includeAuthorizedOperations', 'bool', '0+')],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'groups',
      array([
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        f('groupId', 'string', '0+'),
        f('groupState', 'string', '0+'),
        f('groupEpoch', 'int32', '0+'),
        f('assignmentEpoch', 'int32', '0+'),
        f('assignorName', 'string', '0+'),
        f(
          'members',
          array([
            f('memberId', 'string', '0+'),
            f('instanceId', 'string', '0+', { nullable: '0+', default: null }),
            f('rackId', 'string', '0+', { nullable: '0+', default: null }),
            f('memberEpoch', 'int32', '0+'),
            f('clientId', 'string', '0+'),
            f('clientHost', 'string', '0+'),
            f('subscribedTopicNames', array('string'), '0+'),
            f('subscribedTopicRegex', 'string', '0+', { nullable: '0+', default: null }),
            f('assignment', assignment, '0+'),
            f('targetAssignment', assignment, '0+'),
          ]),
          '0+',
        ),
        f('authorizedOperations', 'int32', '0+', { default: AUTHORIZED_OPERATIONS_OMITTED }),
      ]),
      '0+',
    ),
  ],
});
