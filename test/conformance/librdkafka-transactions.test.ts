/**
 * librdkafka 2.0's transactional producer and read_committed consumer
 * (confluent-kafka-python, Debian python3-confluent-kafka, run with the system
 * Python) against the embedded broker: commit and abort over two topics,
 * consume-transform-produce with send_offsets_to_transaction, and fencing by a second
 * producer with the same transactional.id. The clients run in helpers/transactions.py,
 * which prints what they saw.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useBroker } from '../helpers/broker.ts';
import { useProcess } from '../helpers/processes.ts';
import { kafka } from './helpers/kafkajs.ts';

const script = fileURLToPath(new URL('./helpers/transactions.py', import.meta.url));

interface Event {
  event: string;
  [key: string]: unknown;
}

async function run(bootstrap: string, scenario: string, topics: string[]): Promise<Event[]> {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 1 })) });
  await admin.disconnect();
  const p = useProcess('/usr/bin/python3', [script, bootstrap, scenario]);
  await p.exited;
  const events: Event[] = p
    .output()
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  expect(events.at(-1), JSON.stringify(events)).toEqual({ event: 'done' });
  return events;
}

const reads = (events: Event[]) =>
  Object.fromEntries(
    events.filter((e) => e.event === 'read').map((e) => [`${e.isolation} ${e.topic}`, e.values]),
  );

describe('librdkafka transactions', () => {
  it('read_committed sees the committed transactions and none of the aborted one; no reader sees a marker', async () => {
    const b = await useBroker({ config: { 'transaction.state.log.num.partitions': 3 } });
    const events = await run(b.bootstrap, 'commit-abort', ['orders-payment', 'audit-log']);
    expect(reads(events)).toEqual({
      'read_committed orders-payment': ['payment-1', 'payment-2'],
      'read_committed audit-log': ['audit-1', 'audit-2'],
      'read_uncommitted orders-payment': ['payment-1', 'payment-2', 'aborted-payment'],
      'read_uncommitted audit-log': ['audit-1', 'aborted-audit', 'audit-2'],
    });
  });

  it('consume-transform-produce commits the consumed offsets with the produced records', async () => {
    const b = await useBroker({ config: { 'transaction.state.log.num.partitions': 3 } });
    const events = await run(b.bootstrap, 'ctp', ['ctp-in', 'ctp-out']);
    expect(events.find((e) => e.event === 'committed')).toEqual({ event: 'committed', offset: 3 });
    expect(reads(events)).toEqual({ 'read_committed ctp-out': ['A', 'B', 'C'] });
  });

  it('a second producer with the same transactional.id fences the first, whose commit fails fatally', async () => {
    const b = await useBroker({ config: { 'transaction.state.log.num.partitions': 3 } });
    const events = await run(b.bootstrap, 'fence', ['fenced-topic']);
    const fenced = events.find((e) => e.event === 'fenced');
    expect(fenced, JSON.stringify(events)).toMatchObject({ fatal: true });
    expect(String(fenced!.name)).toMatch(/FENCED/);
    // A's records were aborted with its transaction; only B's are committed.
    expect(reads(events)).toEqual({ 'read_committed fenced-topic': ['from-b'] });
  });
});
