/** DeleteRecords (key 21). Spec: Kafka's DeleteRecordsRequest.json / ...Response.json. */
import { api, array, field as f } from '../schema.ts';

export const deleteRecords = api({
  apiKey: 21,
  name: 'DeleteRecords',
  maxVersion: 2,
  flexibleFrom: 2,
  request: [
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            // -1 means the high watermark.
            f('offset', 'int64', '0+'),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    f('timeoutMs', 'int32', '0+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('lowWatermark', 'int64', '0+'),
            f('errorCode', 'int16', '0+'),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
