/** CreatePartitions (key 37). Spec: Kafka's CreatePartitionsRequest.json / ...Response.json. */
import { api, array, field as f } from '../schema.ts';

export const createPartitions = api({
  apiKey: 37,
  name: 'CreatePartitions',
  maxVersion: 3,
  flexibleFrom: 2,
  request: [
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        // The new total partition count, not the number added.
        f('count', 'int32', '0+'),
        f('assignments', array([f('brokerIds', array('int32'), '0+')]), '0+', { nullable: '0+' }),
      ]),
      '0+',
    ),
    f('timeoutMs', 'int32', '0+'),
    f('validateOnly', 'bool', '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'results',
      array([
        f('name', 'string', '0+'),
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      ]),
      '0+',
    ),
  ],
});
