/**
 * DescribeLogDirs (key 35, KIP-113; v4 adds the volume's sizes, KIP-827). Spec: Kafka's
 * DescribeLogDirsRequest.json / ...Response.json.
 */
import { api, array, field as f } from '../schema.ts';

export const describeLogDirs = api({
  apiKey: 35,
  name: 'DescribeLogDirs',
  maxVersion: 4,
  flexibleFrom: 2,
  request: [
    // null asks for every partition.
    f('topics', array([f('topic', 'string', '0+'), f('partitions', array('int32'), '0+')]), '0+', {
      nullable: '0+',
    }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '3+'),
    f(
      'results',
      array([
        f('errorCode', 'int16', '0+'),
        f('logDir', 'string', '0+'),
        f(
          'topics',
          array([
            f('name', 'string', '0+'),
            f(
              'partitions',
              array([
                f('partitionIndex', 'int32', '0+'),
                f('partitionSize', 'int64', '0+'),
                f('offsetLag', 'int64', '0+'),
                f('isFutureKey', 'bool', '0+'),
              ]),
              '0+',
            ),
          ]),
          '0+',
        ),
        f('totalBytes', 'int64', '4+', { default: -1n }),
        f('usableBytes', 'int64', '4+', { default: -1n }),
      ]),
      '0+',
    ),
  ],
});
