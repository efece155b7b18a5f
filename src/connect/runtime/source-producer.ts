/**
 * The producer of one source task: an idempotent, acks=all producer on the protocol
 * client (src/protocol/client/producer.ts), with the compression `compression.type`
 * names (at its `compression.<codec>.level`), up to
 * `max.in.flight.requests.per.connection` requests in flight, and retries until
 * `delivery.timeout.ms`. Each send is one request's worth of records (the task
 * batches by `max.request.size`); sends settle in call order, so acknowledgements, and
 * with them commitRecord and the committable offsets, follow send order.
 *
 * Why not kafkajs, which serves consume and admin: its idempotent producer is only
 * sound with one request in flight (it rolls sequence numbers back on failure), and its
 * JavaScript CRC-32C, murmur2 and Long arithmetic took about a third of a CDC task's
 * CPU. bench/connect/producer-choice.ts measures the two side by side.
 *
 * Partitions: the Java client's murmur2 of the key (kafkajs's DefaultPartitioner and
 * librdkafka's murmur2_random agree), round-robin without a key. Topics missing from
 * the cluster are auto-created by the producer's metadata request where the broker
 * allows it, as with Kafka's producer.
 *
 * Exactly-once sources (KIP-618) use KafkaTransactionalSourceProducer: the same, on the
 * client's TransactionalProducer with the task's transactional.id; `connect()`
 * registers it with the transaction coordinator, fencing older producers of that id.
 */
import { ClusterClient } from '../../protocol/client/cluster-client.ts';
import { IdempotentProducer, type ProducerRecord } from '../../protocol/client/producer.ts';
import { TransactionalProducer } from '../../protocol/client/transactional-producer.ts';
import type { Logger } from '../../util/logger.ts';
import type { RecordMetadata } from '../api/source-task.ts';
import type { ProducerSettings } from './kafka-clients.ts';

/** A converted record: topic, partition (null: the partitioner chooses), key, value, headers. */
export type ProducedRecord = ProducerRecord;

export interface SourceProducer {
  connect(): Promise<void>;
  /**
   * Send in one request; resolves with each record's metadata, in input order. Several
   * sends may be outstanding (up to `maxInFlight`); they settle in call order.
   */
  send(records: readonly ProducedRecord[]): Promise<RecordMetadata[]>;
  /** How many sends may be outstanding at once. */
  readonly maxInFlight: number;
  disconnect(): Promise<void>;
}

/** A source producer whose sends go into transactions (exactly-once sources). */
export interface TransactionalSourceProducer extends SourceProducer {
  beginTransaction(): void;
  /** Waits for every send of the transaction, then commits it. */
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
}

export class KafkaSourceProducer implements SourceProducer {
  protected readonly producer: IdempotentProducer;
  readonly maxInFlight: number;

  constructor(
    bootstrapServers: string[],
    clientId: string,
    settings: ProducerSettings,
    logger: Logger,
    transactionalId?: string,
  ) {
    const client = new ClusterClient(bootstrapServers, {
      clientId,
      requestTimeoutMs: settings.requestTimeoutMs + 5_000,
    });
    this.maxInFlight = settings.maxInFlight;
    const options = {
      codec: settings.compression,
      ...(settings.compressionLevel !== undefined
        ? { compressionLevel: settings.compressionLevel }
        : {}),
      metadataMaxAgeMs: settings.metadataMaxAgeMs,
      requestTimeoutMs: settings.requestTimeoutMs,
      deliveryTimeoutMs: settings.deliveryTimeoutMs,
      retryBackoffMs: settings.retryBackoffMs,
      maxInFlight: settings.maxInFlight,
      allowAutoTopicCreation: true,
      onRetry: (reason: Error) =>
        logger.warn({ err: reason }, `${clientId}: retrying a produce request`),
    };
    this.producer =
      transactionalId === undefined
        ? new IdempotentProducer(client, options)
        : new TransactionalProducer(client, {
            ...options,
            transactionalId,
            ...(settings.transactionTimeoutMs !== undefined
              ? { transactionTimeoutMs: settings.transactionTimeoutMs }
              : {}),
          });
  }

  connect(): Promise<void> {
    return this.producer.init();
  }

  async disconnect(): Promise<void> {
    this.producer.close();
  }

  send(records: readonly ProducedRecord[]): Promise<RecordMetadata[]> {
    return this.producer.send(records);
  }
}

export class KafkaTransactionalSourceProducer
  extends KafkaSourceProducer
  implements TransactionalSourceProducer
{
  constructor(
    bootstrapServers: string[],
    clientId: string,
    settings: ProducerSettings,
    logger: Logger,
    transactionalId: string,
  ) {
    super(bootstrapServers, clientId, settings, logger, transactionalId);
  }

  private get transactional(): TransactionalProducer {
    return this.producer as TransactionalProducer;
  }

  beginTransaction(): void {
    this.transactional.beginTransaction();
  }

  commitTransaction(): Promise<void> {
    return this.transactional.commitTransaction();
  }

  abortTransaction(): Promise<void> {
    return this.transactional.abortTransaction();
  }
}
