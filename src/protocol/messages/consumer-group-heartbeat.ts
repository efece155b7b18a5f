/**
 * ConsumerGroupHeartbeat (key 68, KIP-848): the consumer group protocol's one request,
 * joining, heartbeating and leaving alike. Spec: Kafka's ConsumerGroupHeartbeatRequest.json
 * / ...Response.json; flexible from v0, v1 adds the subscribed topic regex.
 */
import { api, array, field as f, struct } from '../schema.ts';

const topicPartitions = array([f('topicId', 'uuid', '0+'), f('partitions', array('int32'), '0+')]);

export const consumerGroupHeartbeat = api({
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  maxVersion: 1,
  flexibleFrom: 0,
  request: [
    f('groupId', 'string', '0+'),
    f('memberId', 'string', '0+'),
    f('memberEpoch', 'int32', '0+'),
    // Fields below are null (or -1) when unchanged since the member's last heartbeat.
    f('instanceId', 'string', '0+', { nullable: '0+', default: null }),
    f('rackId', 'string', '0+', { nullable: '0+', default: null }),
    f('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    f('subscribedTopicNames', array('string'), '0+', { nullable: '0+', default: null }),
    f('subscribedTopicRegex', 'string', '1+', { nullable: '1+', default: null }),
    f('serverAssignor', 'string', '0+', { nullable: '0+', default: null }),
    f('topicPartitions', topicPartitions, '0+', { nullable: '0+', default: null }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f('memberId', 'string', '0+', { nullable: '0+', default: null }),
    f('memberEpoch', 'int32', '0+'),
    f('heartbeatIntervalMs', 'int32', '0+'),
    f('assignment', struct([f('topicPartitions', topicPartitions, '0+')]), '0+', {
      nullable: '0+',
      default: null,
    }),
  ],
});
