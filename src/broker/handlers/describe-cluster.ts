/**
 * DescribeCluster (key 60): this node as the only broker, the cluster id, and this node
 * as the controller, as a combined KRaft node answers on its broker listener.
 *
 * Endpoint type (v1, KIP-919): the listener is a broker listener, so brokers (1) are
 * described; controllers (2) get MISMATCHED_ENDPOINT_TYPE and any other value
 * UNSUPPORTED_ENDPOINT_TYPE, as Kafka's AuthHelper.computeDescribeClusterResponse
 * answers (INVALID_REQUEST in v0, which cannot carry another type anyway).
 *
 * Cluster authorized operations, when asked: every operation Kafka defines for the
 * cluster, since there are no ACLs; otherwise Kafka's "not asked" sentinel.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../protocol/sentinels.ts';
import { CLUSTER_OPERATIONS } from './authorized-operations.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

/** Kafka's EndpointType ids. */
const BROKERS = 1;
const CONTROLLERS = 2;

export const handleDescribeCluster: RequestHandler<BrokerServices> = (body, context, services) => {
  const v = context.apiVersion;
  const asked = (body.endpointType as number | undefined) ?? BROKERS;
  if (asked !== BROKERS) {
    const known = asked === CONTROLLERS;
    return {
      throttleTimeMs: 0,
      errorCode:
        v === 0
          ? ErrorCode.INVALID_REQUEST
          : known
            ? ErrorCode.MISMATCHED_ENDPOINT_TYPE
            : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
      errorMessage: known
        ? 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER'
        : `Unsupported endpoint type ${asked}`,
      endpointType: BROKERS,
      clusterId: '',
      controllerId: -1,
      brokers: [],
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    };
  }
  const { nodeId } = services;
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    endpointType: BROKERS,
    clusterId: services.clusterId,
    controllerId: nodeId,
    brokers: [{ brokerId: nodeId, host: services.advertisedHost, port: services.port, rack: null }],
    clusterAuthorizedOperations:
      body.includeClusterAuthorizedOperations === true
        ? CLUSTER_OPERATIONS
        : AUTHORIZED_OPERATIONS_OMITTED,
  };
};
