/**
 * Authorized operations answered when a client asks (Metadata, DescribeCluster,
 * DescribeTopicPartitions): with no ACLs, every operation Kafka's
 * AclEntry.supportedOperations lists for the resource type, as AclOperation bits.
 */
const ops = (...codes: number[]) => codes.reduce((bits, c) => bits | (1 << c), 0);

/** READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS. */
export const TOPIC_OPERATIONS = ops(3, 4, 5, 6, 7, 8, 10, 11);

/** CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE. */
export const CLUSTER_OPERATIONS = ops(5, 7, 8, 9, 10, 11, 12);
