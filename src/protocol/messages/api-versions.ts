/**
 * ApiVersions (key 18). Spec: Kafka's ApiVersionsRequest.json / ApiVersionsResponse.json.
 * Its response header is always v0 (see headers.ts), even in flexible v3, so a
 * client can read the error of a version it does not understand (KIP-511).
 */
import { api, array, field as f } from '../schema.ts';

export const apiVersions = api({
  apiKey: 18,
  name: 'ApiVersions',
  // v4 has v3's layout; it lets SupportedFeatures.MinVersion be 0 (KAFKA-17011).
  maxVersion: 4,
  flexibleFrom: 3,
  request: [
    f('clientSoftwareName', 'string', '3+', { default: '' }),
    f('clientSoftwareVersion', 'string', '3+', { default: '' }),
  ],
  response: [
    f('errorCode', 'int16', '0+'),
    f(
      'apiKeys',
      array([
        f('apiKey', 'int16', '0+'),
        f('minVersion', 'int16', '0+'),
        f('maxVersion', 'int16', '0+'),
      ]),
      '0+',
    ),
    f('throttleTimeMs', 'int32', '1+'),
    f(
      'supportedFeatures',
      array([
        f('name', 'string', '3+'),
        f('minVersion', 'int16', '3+'),
        f('maxVersion', 'int16', '3+'),
      ]),
      '3+',
      { tag: 0 },
    ),
    f('finalizedFeaturesEpoch', 'int64', '3+', { tag: 1, default: -1n }),
    f(
      'finalizedFeatures',
      array([
        f('name', 'string', '3+'),
        f('maxVersionLevel', 'int16', '3+'),
        f('minVersionLevel', 'int16', '3+'),
      ]),
      '3+',
      { tag: 2 },
    ),
    f('zkMigrationReady', 'bool', '3+', { tag: 3, default: false }),
  ],
});
