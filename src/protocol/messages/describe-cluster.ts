/**
 * DescribeCluster (key 60, KIP-700; v1 adds the endpoint type, KIP-919). Spec: Kafka's
 * DescribeClusterRequest.json / ...Response.json: flexible in every version.
 */
import { api, array, field as f } from '../schema.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../sentinels.ts';

/** EndpointType 1: brokers (2 is controllers). */
const BROKERS = 1;

export const describeCluster = api({
  apiKey: 60,
  name: 'DescribeCluster',
  maxVersion: 1,
  flexibleFrom: 0,
  request: [
    f('includeClusterAuthorizedOperations', 'bool', '0+'),
    f('endpointType', 'int8', '1+', { default: BROKERS }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '0+'),
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f('endpointType', 'int8', '1+', { default: BROKERS }),
    f('clusterId', 'string', '0+'),
    f('controllerId', 'int32', '0+', { default: -1 }),
    f(
      'brokers',
      array([
        f('brokerId', 'int32', '0+'),
        f('host', 'string', '0+'),
        f('port', 'int32', '0+'),
        f('rack', 'string', '0+', { nullable: '0+', default: null }),
      ]),
      '0+',
    ),
    f('clusterAuthorizedOperations', 'int32', '0+', { default: AUTHORIZED_OPERATIONS_OMITTED }),
  ],
});
