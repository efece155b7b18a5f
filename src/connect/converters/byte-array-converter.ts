/**
 * ByteArrayConverter, as Kafka Connect's org.apache.kafka.connect.converters.ByteArrayConverter:
 * bytes pass through untouched, with the optional bytes schema.
 */
import {
  type Converter,
  DataException,
  describeValue,
  type Schema,
  type SchemaAndValue,
  Schemas,
} from '../api/index.ts';

const OPTIONAL_BYTES = Schemas.bytes({ optional: true });

export class ByteArrayConverter implements Converter {
  configure(_config: Readonly<Record<string, unknown>>, _isKey: boolean): void {}

  fromConnectData(_topic: string, schema: Schema | null, value: unknown): Buffer | null {
    if (schema && schema.type !== 'bytes') {
      throw new DataException(`Invalid schema type for ByteArrayConverter: ${schema.type}`);
    }
    if (value === null || value === undefined) return null;
    if (!(value instanceof Uint8Array)) {
      throw new DataException(`ByteArrayConverter is not compatible with ${describeValue(value)}`);
    }
    return Buffer.isBuffer(value)
      ? value
      : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }

  toConnectData(_topic: string, bytes: Uint8Array | null): SchemaAndValue {
    if (bytes === null) return { schema: OPTIONAL_BYTES, value: null };
    return {
      schema: OPTIONAL_BYTES,
      value: Buffer.isBuffer(bytes)
        ? bytes
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    };
  }
}
