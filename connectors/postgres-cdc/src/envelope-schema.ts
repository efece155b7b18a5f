/**
 * The schemas of Debezium's change event envelope, `<topic>.Envelope`:
 *   before       optional `.Value` (old row: key columns only unless REPLICA IDENTITY FULL)
 *   after        optional `.Value`
 *   source       io.debezium.connector.postgresql.Source
 *   transaction  optional event.block (provide.transaction.metadata)
 *   op           c create, u update, d delete, r read (snapshot), t truncate
 *   ts_ms        when the connector processed the event
 * Built once per table schema (table-schema.ts), so every event of a table carries the
 * same schema object: converters and transforms cache their work by schema identity.
 */
import { type Schema, Schemas } from '../../../src/connect/api/index.ts';

export const SOURCE_SCHEMA: Schema = Schemas.struct(
  [
    ['version', Schemas.string()],
    ['connector', Schemas.string()],
    ['name', Schemas.string()],
    ['ts_ms', Schemas.int64()],
    [
      'snapshot',
      Schemas.string({
        optional: true,
        name: 'io.debezium.data.Enum',
        version: 1,
        parameters: {
          allowed:
            'true,first,first_in_data_collection,last_in_data_collection,last,false,incremental',
        },
        defaultValue: 'false',
      }),
    ],
    ['db', Schemas.string()],
    ['sequence', Schemas.string({ optional: true })],
    ['schema', Schemas.string()],
    ['table', Schemas.string()],
    ['txId', Schemas.int64({ optional: true })],
    ['lsn', Schemas.int64({ optional: true })],
    ['xmin', Schemas.int64({ optional: true })],
  ],
  { name: 'io.debezium.connector.postgresql.Source' },
);

export const TRANSACTION_BLOCK_SCHEMA: Schema = Schemas.struct(
  [
    ['id', Schemas.string()],
    ['total_order', Schemas.int64()],
    ['data_collection_order', Schemas.int64()],
  ],
  { name: 'event.block', version: 1, optional: true },
);

/**
 * The envelope of topic `topic`'s events, whose rows are `valueSchema` structs; its name
 * goes through `adjustName` (schema.name.adjustment.mode, name-adjustment.ts).
 */
export function envelopeSchema(
  topic: string,
  valueSchema: Schema,
  adjustName: (name: string) => string = (name) => name,
): Schema {
  return Schemas.struct(
    [
      ['before', valueSchema],
      ['after', valueSchema],
      ['source', SOURCE_SCHEMA],
      ['transaction', TRANSACTION_BLOCK_SCHEMA],
      ['op', Schemas.string()],
      ['ts_ms', Schemas.int64({ optional: true })],
    ],
    { name: adjustName(`${topic}.Envelope`), version: 1 },
  );
}
