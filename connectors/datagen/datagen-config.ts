/**
 * Config keys of the data generator. `kafka.topic` and `iterations` are the keys of
 * Confluent's datagen connector, accepted so its example configs work.
 */
import { type AnyConfigDef, atLeast, define } from '../../src/connect/api/index.ts';

export const datagenConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'topic',
    type: 'string',
    default: null,
    importance: 'high',
    doc: 'Topic to write generated records to (or kafka.topic).',
  }),
  define<string>({
    name: 'kafka.topic',
    type: 'string',
    default: null,
    importance: 'low',
    doc: "Confluent datagen's name for topic.",
  }),
  define<number>({
    name: 'records.per.second',
    type: 'double',
    default: 100,
    validator: (v) => (v < 0 ? 'must be 0 (unlimited) or more' : undefined),
    importance: 'high',
    doc: 'Records per second over all tasks; 0 means as fast as possible.',
  }),
  define<number>({
    name: 'iterations',
    type: 'long',
    default: -1,
    validator: (v) => (v < -1 ? 'must be -1 (unlimited) or more' : undefined),
    importance: 'high',
    doc: 'Total records to generate over all tasks; -1 means unlimited.',
  }),
  define<number>({
    name: 'key.cardinality',
    type: 'long',
    default: 1000,
    validator: atLeast(1),
    importance: 'medium',
    doc: 'Number of distinct keys (key-0 .. key-N-1), so compaction and upserts can be exercised.',
  }),
  define<number>({
    name: 'record.size',
    type: 'int',
    default: 100,
    validator: atLeast(0),
    importance: 'medium',
    doc: 'Length in bytes of the payload string field, to set the record size.',
  }),
  define<number>({
    name: 'batch.size',
    type: 'int',
    default: 1000,
    validator: atLeast(1),
    importance: 'low',
    doc: 'Maximum records returned by one poll.',
  }),
];

/** Keys the connector adds to each task config. */
export const TASK_INDEX = 'datagen.task.index';
export const TASK_COUNT = 'datagen.task.count';
