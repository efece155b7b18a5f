/**
 * Config keys of the file connectors: Kafka's FileStream connectors' own (`file`,
 * `topic`, `batch.size`; the sink's `topics` is the runtime's sink key).
 */
import { type AnyConfigDef, atLeast, define, nonEmpty } from '../../src/connect/api/index.ts';

export const sourceConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'file',
    type: 'string',
    validator: nonEmpty,
    importance: 'high',
    doc: 'Source filename; lines appended to it are read and produced, one record each.',
  }),
  define<string>({
    name: 'topic',
    type: 'string',
    importance: 'high',
    validator: (v) =>
      v.trim() === ''
        ? 'must not be empty'
        : v.includes(',')
          ? "'topic' in FileStreamSourceConnector configuration requires definition of a single topic"
          : undefined,
    doc: 'The topic to publish data to.',
  }),
  define<number>({
    name: 'batch.size',
    type: 'int',
    default: 2000,
    validator: atLeast(1),
    importance: 'low',
    doc: 'The maximum number of records the source task can read from the file each time it is polled.',
  }),
];

export const sinkConfigDefs: AnyConfigDef[] = [
  define<string | null>({
    name: 'file',
    type: 'string',
    default: null,
    importance: 'high',
    doc: 'Destination filename; each record is appended as one line. Standard output if absent.',
  }),
];
