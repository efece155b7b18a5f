/**
 * Readers of a whole topic for transaction tests, both real clients: the project's own
 * read_committed reader (KafkaBasedLog over the protocol client, which drops aborted
 * transactions with the Fetch answer's list) and kafkajs in either isolation level.
 */
import { KafkaBasedLog, type LogRecord } from '../../../../src/connect/storage/kafka-based-log.ts';
import { ClusterClient } from '../../../../src/protocol/client/cluster-client.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { kafka } from '../../../conformance/helpers/kafkajs.ts';
import { waitFor } from '../../../helpers/wait.ts';

/** Every committed record of the topic up to its last stable offset, read with read_committed. */
export async function readCommitted(
  bootstrap: string,
  topic: string,
  partitions: number,
): Promise<LogRecord[]> {
  const client = new ClusterClient(bootstrap, { clientId: 'txn-reader' });
  const records: LogRecord[] = [];
  const log = new KafkaBasedLog({
    client,
    topic,
    partitions,
    logger: getLogger('txn-reader'),
    maxWaitMs: 50,
    onRecord: (r) => records.push(r),
  });
  try {
    await log.start();
  } finally {
    await log.stop();
    client.close();
  }
  return records;
}

/**
 * The values a kafkajs consumer of that isolation level sees, until it has seen
 * `partitions` records whose value is `lastValue` (tests end each partition with one,
 * so "nothing more" is decided by data rather than by waiting).
 */
export async function readWithKafkajs(
  bootstrap: string,
  topic: string,
  lastValue: string,
  partitions: number,
  readUncommitted: boolean,
): Promise<string[]> {
  const consumer = kafka(bootstrap).consumer({
    groupId: `txn-reader-${topic}-${Math.random()}`,
    readUncommitted,
    maxWaitTimeInMs: 100,
  });
  const seen: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value?.toString() ?? 'null');
      },
    });
    await waitFor(`record '${lastValue}' of ${topic}`, () =>
      seen.filter((v) => v === lastValue).length >= partitions ? true : undefined,
    );
  } finally {
    await consumer.disconnect();
  }
  return seen;
}
