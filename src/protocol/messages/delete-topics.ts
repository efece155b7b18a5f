/**
 * DeleteTopics (key 20). Spec: Kafka's DeleteTopicsRequest.json / ...Response.json.
 * v6 names topics by name or topic id; v0-5 by name only.
 */
import { api, array, field as f } from '../schema.ts';

export const deleteTopics = api({
  apiKey: 20,
  name: 'DeleteTopics',
  maxVersion: 6,
  flexibleFrom: 4,
  request: [
    f(
      'topics',
      array([
        f('name', 'string', '6+', { nullable: '6+', default: null }),
        f('topicId', 'uuid', '6+'),
      ]),
      '6+',
    ),
    f('topicNames', array('string'), '0-5'),
    f('timeoutMs', 'int32', '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'responses',
      array([
        f('name', 'string', '0+', { nullable: '6+' }),
        f('topicId', 'uuid', '6+'),
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '5+', { nullable: '5+', default: null }),
      ]),
      '0+',
    ),
  ],
});
