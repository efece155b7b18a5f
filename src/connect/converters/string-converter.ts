/**
 * StringConverter, as Kafka Connect's org.apache.kafka.connect.storage.StringConverter:
 * writes any value's text form as UTF-8 (the converter.encoding key, as in Kafka,
 * picks another Node-supported encoding) and reads bytes back as an optional string.
 */
import {
  type AnyConfigDef,
  type Converter,
  DataException,
  define,
  describeValue,
  parseConfigOrThrow,
  type Schema,
  type SchemaAndValue,
  Schemas,
} from '../api/index.ts';

export const stringConverterConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'converter.encoding',
    type: 'string',
    default: 'UTF8',
    validator: (v) =>
      Buffer.isEncoding(normalizeEncoding(v)) ? undefined : `unsupported encoding ${v}`,
    importance: 'high',
    doc: 'The name of the character encoding used for strings.',
  }),
];

const OPTIONAL_STRING = Schemas.string({ optional: true });
/** A null key or value, the same frozen object each time (sinks see one per record). */
const NULL_VALUE: SchemaAndValue = Object.freeze({ schema: OPTIONAL_STRING, value: null });

function normalizeEncoding(name: string): BufferEncoding {
  const lower = name.toLowerCase().replace(/[-_]/g, '');
  if (lower === 'utf8') return 'utf8';
  if (lower === 'utf16le' || lower === 'utf16') return 'utf16le';
  if (lower === 'iso88591' || lower === 'latin1') return 'latin1';
  if (lower === 'usascii' || lower === 'ascii') return 'ascii';
  return lower as BufferEncoding;
}

export class StringConverter implements Converter {
  private encoding: BufferEncoding = 'utf8';

  configure(config: Readonly<Record<string, unknown>>, _isKey: boolean): void {
    const { values } = parseConfigOrThrow(stringConverterConfigDefs, config);
    this.encoding = normalizeEncoding(values['converter.encoding'] as string);
  }

  fromConnectData(_topic: string, _schema: Schema | null, value: unknown): Buffer | null {
    if (value === null || value === undefined) return null;
    return Buffer.from(textOf(value), this.encoding);
  }

  toConnectData(_topic: string, bytes: Uint8Array | null): SchemaAndValue {
    if (bytes === null) return NULL_VALUE;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
      this.encoding,
    );
    return { schema: OPTIONAL_STRING, value: text };
  }
}

/** Java's toString for the value kinds schema.ts allows (structs and maps as JSON). */
function textOf(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
  }
  if (value instanceof Uint8Array) {
    throw new DataException(
      `StringConverter cannot write ${describeValue(value)}: use ByteArrayConverter for bytes`,
    );
  }
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}
