/**
 * The first `expected` records of a topic (all partitions, from the beginning) as text
 * with their headers, read by a kafkajs consumer in a group of its own; fails with a
 * clear message when fewer arrive in time. For tests that check what a worker wrote
 * to a topic, such as a dead letter queue.
 */
import { Kafka, logLevel } from 'kafkajs';
import { waitFor } from './wait.ts';

export interface ReadRecord {
  value: string;
  headers: Record<string, string>;
}

export async function readRecords(
  bootstrap: string,
  topic: string,
  expected: number,
): Promise<ReadRecord[]> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
  // Kafka's consumers wait at most fetch.max.wait.ms=500 for data; kafkajs's default is 5 s.
  const consumer = kafka.consumer({
    groupId: `reader-${topic}-${Date.now()}-${Math.random()}`,
    maxWaitTimeInMs: 500,
  });
  const seen: ReadRecord[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
        seen.push({ value: message.value?.toString() ?? 'null', headers });
      },
    });
    await waitFor(`${expected} records in ${topic}`, () =>
      seen.length >= expected ? true : undefined,
    );
  } finally {
    await consumer.disconnect();
  }
  return seen;
}
