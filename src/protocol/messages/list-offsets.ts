/** ListOffsets (key 2). Spec: Kafka's ListOffsetsRequest.json / ListOffsetsResponse.json. */
import { api, array, field as f } from '../schema.ts';

export const listOffsets = api({
  apiKey: 2,
  name: 'ListOffsets',
  maxVersion: 10,
  flexibleFrom: 6,
  request: [
    // No default in Kafka's spec (0): a consumer says -1 explicitly.
    f('replicaId', 'int32', '0+'),
    f('isolationLevel', 'int8', '2+', { default: 0 }),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('currentLeaderEpoch', 'int32', '4+', { default: -1 }),
            f('timestamp', 'int64', '0+'),
            f('maxNumOffsets', 'int32', '0', { default: 1 }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
    // KIP-1075: how long a remote (tiered) lookup may take; no default in the spec.
    f('timeoutMs', 'int32', '10+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '2+'),
    f(
      'topics',
      array([
        f('name', 'string', '0+'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0+'),
            f('errorCode', 'int16', '0+'),
            f('oldStyleOffsets', array('int64'), '0'),
            f('timestamp', 'int64', '1+', { default: -1n }),
            f('offset', 'int64', '1+', { default: -1n }),
            f('leaderEpoch', 'int32', '4+', { default: -1 }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});
