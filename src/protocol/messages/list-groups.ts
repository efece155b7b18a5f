/** ListGroups (key 16). Spec: Kafka's ListGroupsRequest.json / ListGroupsResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const listGroups = api({
  apiKey: 16,
  name: 'ListGroups',
  maxVersion: 5,
  flexibleFrom: 3,
  // librdkafka 2.0.x ends its v3+ requests with a second empty tag section.
  repeatedRequestTagsFrom: 3,
  request: [f('statesFilter', array('string'), '4+'), f('typesFilter', array('string'), '5+')],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0+'),
    f(
      'groups',
      array([
        f('groupId', 'string', '0+'),
        f('protocolType', 'string', '0+'),
        f('groupState', 'string', '4+', { default: '' }),
        f('groupType', 'string', '5+', { default: '' }),
      ]),
      '0+',
    ),
  ],
});
