/** AlterConfigs (key 33). Spec: Kafka's AlterConfigsRequest.json / AlterConfigsResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const alterConfigs = api({
  apiKey: 33,
  name: 'AlterConfigs',
  maxVersion: 2,
  flexibleFrom: 2,
  request: [
    f(
      'resources',
      array([
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
        f(
          'configs',
          array([f('name', 'string', '0+'), f('value', 'string', '0+', { nullable: '0+' })]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f('validateOnly', 'bool', '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'responses',
      array([
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+' }),
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
      ]),
      '0+',
    ),
  ],
});
