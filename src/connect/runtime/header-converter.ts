/**
 * Header value conversion. Kafka Connect's default `header.converter`,
 * org.apache.kafka.connect.storage.SimpleHeaderConverter, is built in here: a string
 * header value is written as its UTF-8 bytes, any other value as its schemaless JSON
 * text; reading gives the UTF-8 text with a string schema (Kafka's version also guesses
 * numbers and booleans back; tasks here receive text and parse what they need).
 * A `header.converter` naming a converter plugin (StringConverter, JsonConverter, ...)
 * is used through the ordinary Converter interface instead.
 */
import type { Header } from '../api/connect-record.ts';
import type { Converter } from '../api/converter.ts';
import { Schemas } from '../api/schema.ts';
import { JsonConverter } from '../converters/json-converter.ts';

const OPTIONAL_STRING = Schemas.string({ optional: true });

export const SIMPLE_HEADER_CONVERTER = 'org.apache.kafka.connect.storage.SimpleHeaderConverter';
const SIMPLE_NAMES = new Set([SIMPLE_HEADER_CONVERTER, 'SimpleHeaderConverter', 'SimpleHeader']);

export function isSimpleHeaderConverter(name: string): boolean {
  return SIMPLE_NAMES.has(name.trim());
}

export interface HeaderConverter {
  toBytes(topic: string, header: Header): Buffer | null;
  toHeader(topic: string, key: string, bytes: Buffer | null): Header;
}

export class SimpleHeaderConverter implements HeaderConverter {
  private readonly json = new JsonConverter();

  constructor() {
    this.json.configure({ 'schemas.enable': 'false' }, false);
  }

  toBytes(topic: string, header: Header): Buffer | null {
    if (header.value === null || header.value === undefined) return null;
    if (typeof header.value === 'string') return Buffer.from(header.value, 'utf8');
    return copied(this.json, this.json.fromConnectData(topic, header.schema ?? null, header.value));
  }

  toHeader(_topic: string, key: string, bytes: Buffer | null): Header {
    if (bytes === null) return { key, value: null, schema: null };
    return { key, value: bytes.toString('utf8'), schema: OPTIONAL_STRING };
  }
}

/** A converter plugin used for header values. */
export class ConverterHeaderConverter implements HeaderConverter {
  constructor(private readonly converter: Converter) {}

  toBytes(topic: string, header: Header): Buffer | null {
    return copied(
      this.converter,
      this.converter.fromConnectData(topic, header.schema ?? null, header.value),
    );
  }

  toHeader(topic: string, key: string, bytes: Buffer | null): Header {
    const { schema, value } = this.converter.toConnectData(topic, bytes);
    return { key, value, schema };
  }
}

/**
 * A header value's bytes of its own, the converter's handed back: nothing releases
 * header bytes after the send, and a converter's result that is never handed back
 * keeps its whole output slab from reuse (json-byte-output.ts). Header values are small.
 */
function copied(converter: Converter, bytes: Buffer | null): Buffer | null {
  if (bytes === null || converter.release === undefined) return bytes;
  const own = Buffer.from(bytes);
  converter.release(bytes);
  return own;
}
