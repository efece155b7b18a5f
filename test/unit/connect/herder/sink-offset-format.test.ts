/**
 * The sink offsets of PATCH /connectors/{name}/offsets, checked entry by entry with
 * Kafka Connect's messages (SinkUtils.parseSinkConnectorOffsets and its tests, and
 * OffsetsApiIntegrationTest.testAlterSinkConnectorOffsetsInvalidRequestBody), plus
 * the checks Kafka Connect leaves to the admin client (negative numbers) or skips
 * (unknown keys, illegal topic names).
 */
import { describe, expect, it } from 'vitest';
import type { ConnectorOffset } from '../../../../src/connect/herder/herder.ts';
import { isHerderError } from '../../../../src/connect/herder/herder.ts';
import { parseSinkOffsets } from '../../../../src/connect/herder/sink-offset-format.ts';

const tp = (kafka_topic: unknown, kafka_partition: unknown) => ({ kafka_topic, kafka_partition });

function refusal(offsets: unknown[]): string {
  try {
    parseSinkOffsets(offsets as ConnectorOffset[]);
  } catch (e) {
    if (isHerderError(e) && e.kind === 'bad-request') return e.message;
    throw e;
  }
  throw new Error('accepted');
}

describe('parseSinkOffsets', () => {
  it.each([
    [
      'a null partition',
      { partition: null, offset: null },
      'The partition for a sink connector offset cannot be null or missing',
    ],
    [
      'a missing partition',
      { offset: { kafka_offset: 1 } },
      'The partition for a sink connector offset cannot be null or missing',
    ],
    [
      'an empty partition',
      { partition: {}, offset: null },
      "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    ],
    [
      'no kafka_partition key',
      { partition: { kafka_topic: 't' }, offset: { kafka_offset: 1 } },
      "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    ],
    [
      'no kafka_topic key',
      { partition: { kafka_partition: 5 }, offset: { kafka_offset: 1 } },
      "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    ],
    [
      'a null topic',
      { partition: tp(null, 1), offset: null },
      'Kafka topic names must be valid strings and may not be null',
    ],
    [
      'a null partition number',
      { partition: tp('t', null), offset: null },
      'Kafka partitions must be valid numbers and may not be null',
    ],
    [
      'a partition that is not a number',
      { partition: tp('test', 'not a number'), offset: null },
      "Failed to parse the following Kafka partition value in the provided offsets: 'not a number'. Partition values for sink connectors need to be integers.",
    ],
    [
      'a fractional partition',
      { partition: tp('t', 1.5), offset: null },
      "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. Partition values for sink connectors need to be integers.",
    ],
    [
      'a partition beyond int32',
      { partition: tp('t', 2 ** 31), offset: null },
      "Failed to parse the following Kafka partition value in the provided offsets: '2147483648'. Partition values for sink connectors need to be integers.",
    ],
    [
      'a negative partition',
      { partition: tp('t', -1), offset: { kafka_offset: 1 } },
      "Invalid Kafka partition value in the provided offsets: '-1'. Partition values for sink connectors need to be non-negative integers.",
    ],
    [
      'an offset without kafka_offset',
      { partition: tp('test', 1), offset: {} },
      "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
    ],
    [
      'an offset that is not a number',
      { partition: tp('test', 1), offset: { kafka_offset: 'not a number' } },
      "Failed to parse the following Kafka offset value in the provided offsets: 'not a number'. Offset values for sink connectors need to be integers.",
    ],
    [
      'a boolean offset',
      { partition: tp('t', 0), offset: { kafka_offset: true } },
      "Failed to parse the following Kafka offset value in the provided offsets: 'true'. Offset values for sink connectors need to be integers.",
    ],
    [
      'a negative offset',
      { partition: tp('t', 0), offset: { kafka_offset: -5 } },
      "Invalid Kafka offset value in the provided offsets: '-5'. Offset values for sink connectors need to be non-negative integers.",
    ],
    [
      "-1 (kafkajs's 'latest')",
      { partition: tp('t', 0), offset: { kafka_offset: -1 } },
      "Invalid Kafka offset value in the provided offsets: '-1'. Offset values for sink connectors need to be non-negative integers.",
    ],
    [
      'a negative offset as text',
      { partition: tp('t', 0), offset: { kafka_offset: '-2' } },
      "Invalid Kafka offset value in the provided offsets: '-2'. Offset values for sink connectors need to be non-negative integers.",
    ],
    [
      'an offset beyond what a number holds exactly',
      { partition: tp('t', 0), offset: { kafka_offset: '9007199254740993' } },
      "Invalid Kafka offset value in the provided offsets: '9007199254740993'. Offset values for sink connectors above 9007199254740991 are not supported.",
    ],
    [
      'an illegal topic name',
      { partition: tp('a topic', 0), offset: null },
      "Invalid Kafka topic name in the provided offsets: 'a topic'. Topic names are 1 to 249 characters of ASCII letters, digits, '.', '_' and '-', and neither '.' nor '..'.",
    ],
    [
      'an unknown partition key',
      { partition: { ...tp('t', 0), kafka_partiton: 1 }, offset: null },
      "The partition for a sink connector offset may only contain the keys 'kafka_topic' and 'kafka_partition', but it also contains 'kafka_partiton'",
    ],
    [
      'an unknown offset key',
      { partition: tp('t', 0), offset: { kafka_offset: 1, metadata: 'x' } },
      "The offset for a sink connector may only contain the key 'kafka_offset', but it also contains 'metadata'",
    ],
  ])('refuses %s with 400 and its message', (_what, entry, message) => {
    expect(refusal([entry])).toBe(message);
  });

  it('refuses the whole request for one bad entry among good ones', () => {
    const good = { partition: tp('t', 0), offset: { kafka_offset: 3 } };
    const bad = { partition: tp('t', 1), offset: { kafka_offset: -3 } };
    expect(refusal([good, bad, good])).toMatch(/'-3'/);
  });

  it('reads partitions and offsets given as numbers or as digit strings, a null offset as a reset', () => {
    expect(
      parseSinkOffsets([
        { partition: tp('lines', '10'), offset: { kafka_offset: '100' } },
        { partition: tp('lines', 2), offset: { kafka_offset: 0 } },
        { partition: tp('lines', 3), offset: null },
      ]),
    ).toEqual([
      { topic: 'lines', partition: 10, offset: 100 },
      { topic: 'lines', partition: 2, offset: 0 },
      { topic: 'lines', partition: 3, offset: null },
    ]);
  });

  it('keeps the last offset of a partition given twice, as Kafka Connect’s map does', () => {
    expect(
      parseSinkOffsets([
        { partition: tp('lines', 0), offset: { kafka_offset: 1 } },
        { partition: tp('lines', '0'), offset: { kafka_offset: 7 } },
      ]),
    ).toEqual([{ topic: 'lines', partition: 0, offset: 7 }]);
  });
});
