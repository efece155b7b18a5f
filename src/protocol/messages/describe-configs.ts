/**
 * DescribeConfigs (key 32). Spec: Kafka's DescribeConfigsRequest.json / ...Response.json.
 * resourceType: 2 topic, 4 broker, 8 broker logger.
 */
import { api, array, field as f } from '../schema.ts';

export const describeConfigs = api({
  apiKey: 32,
  name: 'DescribeConfigs',
  maxVersion: 4,
  flexibleFrom: 4,
  request: [
    f(
      'resources',
      array([
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
        // null asks for every key.
        f('configurationKeys', array('string'), '0+', { nullable: '0+' }),
      ]),
      '0+',
    ),
    f('includeSynonyms', 'bool', '1+', { default: false }),
    f('includeDocumentation', 'bool', '3+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'results',
      array([
        f('errorCode', 'int16', '0+'),
        f('errorMessage', 'string', '0+', { nullable: '0+' }),
        f('resourceType', 'int8', '0+'),
        f('resourceName', 'string', '0+'),
        f(
          'configs',
          array([
            f('name', 'string', '0+'),
            f('value', 'string', '0+', { nullable: '0+' }),
            f('readOnly', 'bool', '0+'),
            f('isDefault', 'bool', '0', { default: false }),
            f('configSource', 'int8', '1+', { default: -1 }),
            f('isSensitive', 'bool', '0+'),
            f(
              'synonyms',
              array([
                f('name', 'string', '1+'),
                f('value', 'string', '1+', { nullable: '1+' }),
                f('source', 'int8', '1+'),
              ]),
              '1+',
            ),
            f('configType', 'int8', '3+', { default: 0 }),
            f('documentation', 'string', '3+', { nullable: '0+' }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
