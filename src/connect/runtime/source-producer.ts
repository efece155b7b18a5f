/**
 * The producer of one source task: kafkajs, idempotent, acks=all, with the
 * compression `compression.type` names. A task's records go out one request at a time
 * (the next batch waits for the previous acknowledgement): kafkajs assigns idempotent
 * sequence numbers per request and rolls them back on failure, which is only sound
 * without concurrent requests, and one request at a time also keeps acknowledgements in
 * send order. Records polled meanwhile accumulate and go out together in the next
 * request, which is where batching comes from.
 *
 * Partitions: kafkajs's default partitioner (the Java client's murmur2 of the key,
 * round-robin without a key), wrapped so that it writes the partition it chose onto
 * the message. kafkajs keeps each partition's messages in input order, so every
 * record's offset follows from its partition's base offset in the answer, and
 * commitRecord gets exact metadata. Topics missing from the cluster are auto-created by
 * the producer's metadata request where the broker allows it, as with Kafka's producer.
 */
import {
  type ICustomPartitioner,
  type Kafka,
  type Message,
  Partitioners,
  type Producer,
} from 'kafkajs';
import type { RecordMetadata } from '../api/source-task.ts';
import type { ProducerSettings } from './kafka-clients.ts';

export interface ProducedRecord {
  readonly topic: string;
  /** Null: the partitioner chooses. */
  readonly partition: number | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Null: the send time. */
  readonly timestamp: number | null;
  readonly headers: Record<string, Buffer[]>;
}

export interface SourceProducer {
  connect(): Promise<void>;
  /** Send in one request; resolves with each record's metadata, in input order. */
  send(records: readonly ProducedRecord[]): Promise<RecordMetadata[]>;
  disconnect(): Promise<void>;
}

/** The default partitioner, recording its choice on the message. */
const recordingPartitioner: ICustomPartitioner = () => {
  const inner = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = inner(args);
    (args.message as Message).partition = partition;
    return partition;
  };
};

export class KafkajsSourceProducer implements SourceProducer {
  private readonly producer: Producer;

  constructor(
    kafka: Kafka,
    private readonly settings: ProducerSettings,
  ) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // Kafka's producer retries until delivery.timeout.ms; kafkajs's idempotent
      // producer wants unlimited retries (fewer may break its sequence numbers).
      retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
      createPartitioner: recordingPartitioner,
      allowAutoTopicCreation: true,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  async send(records: readonly ProducedRecord[]): Promise<RecordMetadata[]> {
    const byTopic = new Map<string, Message[]>();
    const messages: Message[] = records.map((r) => {
      const message: Message = {
        key: r.key,
        value: r.value,
        headers: r.headers,
        ...(r.partition !== null ? { partition: r.partition } : {}),
        ...(r.timestamp !== null ? { timestamp: String(r.timestamp) } : {}),
      };
      let list = byTopic.get(r.topic);
      if (list === undefined) {
        list = [];
        byTopic.set(r.topic, list);
      }
      list.push(message);
      return message;
    });
    const sentAt = Date.now();
    const answers = await this.producer.sendBatch({
      acks: -1,
      compression: this.settings.compression,
      topicMessages: [...byTopic].map(([topic, msgs]) => ({ topic, messages: msgs })),
    });
    const base = new Map<string, { next: number; logAppendTime: number }>();
    for (const a of answers) {
      base.set(`${a.topicName}\u0000${a.partition}`, {
        next: Number(a.baseOffset ?? a.offset ?? -1),
        logAppendTime: Number(a.logAppendTime ?? -1),
      });
    }
    return records.map((r, i) => {
      const partition = (messages[i] as Message).partition ?? -1;
      const b = base.get(`${r.topic}\u0000${partition}`);
      const offset = b === undefined || b.next < 0 ? -1 : b.next++;
      const timestamp =
        b !== undefined && b.logAppendTime >= 0 ? b.logAppendTime : (r.timestamp ?? sentAt);
      return { topic: r.topic, partition, offset, timestamp };
    });
  }
}
