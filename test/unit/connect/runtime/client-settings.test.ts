/**
 * The consumer and producer keys of kafka-clients.ts: Kafka's defaults, the worker's
 * request.timeout.ms / retry.backoff.ms / metadata.max.age.ms inherited when a client
 * key is not set, and an error naming the key and the allowed values for a bad choice.
 */
import { describe, expect, it } from 'vitest';
import {
  consumerSettings,
  producerSettings,
} from '../../../../src/connect/runtime/kafka-clients.ts';

describe('client settings', () => {
  it("defaults the consumer as Kafka Connect's sink consumer, inheriting the worker's timeouts", () => {
    const s = consumerSettings({}, { 'request.timeout.ms': 12_000, 'metadata.max.age.ms': 5_000 });
    expect(s).toMatchObject({
      autoOffsetReset: 'earliest',
      readCommitted: false,
      allowAutoTopicCreation: true,
      requestTimeoutMs: 12_000,
      metadataMaxAgeMs: 5_000,
      retryBackoffMs: 100,
      sessionTimeoutMs: 45_000,
    });
    expect(
      consumerSettings(
        {
          'request.timeout.ms': '7000',
          'isolation.level': 'READ_COMMITTED',
          'allow.auto.create.topics': 'false',
        },
        { 'request.timeout.ms': 12_000 },
      ),
    ).toMatchObject({
      requestTimeoutMs: 7_000,
      readCommitted: true,
      allowAutoTopicCreation: false,
    });
    expect(producerSettings({}, { 'retry.backoff.ms': 250 })).toMatchObject({
      retryBackoffMs: 250,
      requestTimeoutMs: 30_000,
    });
  });

  it('names the key and what it allows for a bad choice', () => {
    expect(() => consumerSettings({ 'auto.offset.reset': 'smallest' })).toThrow(
      'Invalid value smallest for configuration auto.offset.reset: expected earliest, latest or none',
    );
    expect(() => consumerSettings({ 'isolation.level': 'serializable' })).toThrow(
      'Invalid value serializable for configuration isolation.level: expected read_uncommitted or read_committed',
    );
    expect(() => consumerSettings({ 'allow.auto.create.topics': 'yes' })).toThrow(
      'Invalid value yes for configuration allow.auto.create.topics: expected true or false',
    );
  });
});
