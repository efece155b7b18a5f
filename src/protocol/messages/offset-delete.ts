/** OffsetDelete (key 47). Spec: Kafka's OffsetDeleteRequest.json / OffsetDeleteResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const offsetDelete = api({
  apiKey: 47,
  name: 'OffsetDelete',
  maxVersion: 0,
  flexibleFrom: null,
  request: [
    f('groupId', 'string', '0+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f('partitions', array([f('partitionIndex', 'int32', '0+')]), '0+'),
      ]),
      '0+',
    ),
  ],
  response: [
    f('errorCode', 'int16', '0+'),
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([f('partitionIndex', 'int32', '0+'), f('errorCode', 'int16', '0+')]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
