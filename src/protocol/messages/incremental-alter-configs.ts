/**
 * IncrementalAlterConfigs (key 44). Spec: Kafka's IncrementalAlterConfigsRequest.json /
 * ...Response.json. configOperation: 0 set, 1 delete, 2 append, 3 subtract.
 */
import { api, array, field as f } from '../schema.ts';

export const incrementalAlterConfigs = api({
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  maxVersion: 1,
  flexibleFrom: 1,
  request: [
    f(
      'resources',
      array([
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
        f(
          'configs',
          array([
            f('name', 'string', '0+'),
            f('configOperation', 'int8', '0+'),
            f('value', 'string', '0+', { nullable: '0+' }),
          ]),
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
