/** CreateTopics (key 19). Spec: Kafka's CreateTopicsRequest.json / CreateTopicsResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const createTopics = api({
  apiKey: 19,
  name: 'CreateTopics',
  maxVersion: 7,
  flexibleFrom: 5,
  request: [
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        // -1 (v4+) means the broker default.
        f('numPartitions', 'int32', '0+'),
        f('replicationFactor', 'int16', '0+'),
        f(
          'assignments',
          array([f('partitionIndex', 'int32', '0+'), f('brokerIds', array('int32'), '0+')]),
          '0+',
        ),
        f(
          'configs',
          array([f('name', 'string', '0+'), f('value', 'string', '0+', { nullable: '0+' })]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f('timeoutMs', 'int32', '0+', { default: 60000 }),
    f('validateOnly', 'bool', '1+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f('topicId', 'uuid', '7+'),
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '1+', { nullable: '0+' }),
        f('topicConfigErrorCode', 'int16', '5+', { tag: 0, default: 0 }),
        f('numPartitions', 'int32', '5+', { default: -1 }),
        f('replicationFactor', 'int16', '5+', { default: -1 }),
        f(
          'configs',
          array([
            f('name', 'string', '5+'),
            f('value', 'string', '5+', { nullable: '5+' }),
            f('readOnly', 'bool', '5+'),
            f('configSource', 'int8', '5+', { default: -1 }),
            f('isSensitive', 'bool', '5+'),
          ]),
          '5+',
          { nullable: '5+' },
        ),
      ]),
      '0+',
    ),
  ],
});
