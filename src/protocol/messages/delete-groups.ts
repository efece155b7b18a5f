/** DeleteGroups (key 42). Spec: Kafka's DeleteGroupsRequest.json / DeleteGroupsResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const deleteGroups = api({
  apiKey: 42,
  name: 'DeleteGroups',
  maxVersion: 2,
  flexibleFrom: 2,
  request: [f('groupsNames', array('string'), '0+')],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('results', array([f('groupId', 'string', '0+'), f('errorCode', 'int16', '0+')]), '0+'),
  ],
});
