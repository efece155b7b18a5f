/**
 * The sink's position in Redis: per topic partition, the next Kafka offset whose job
 * is not yet in Redis. Format: one string key per partition,
 *   <queue.prefix>:connect-sink:<connector>:<topic>:<partition>  ->  "<next offset>"
 * written only inside the MULTI/EXEC transaction that adds the jobs of the records
 * before it (job-writer.ts), so "the position says N" and "the jobs of every record
 * below N are in Redis" are one fact. It outlives the connector: a connector created
 * again under the same name resumes where the old one stopped, as its consumer group
 * does. Delete the keys to start over.
 */
import type { TopicPartition } from '../../src/connect/api/index.ts';

export function positionKey(prefix: string, connector: string, tp: TopicPartition): string {
  return `${prefix}:connect-sink:${connector}:${tp.topic}:${tp.partition}`;
}
