/**
 * Bytes as binary.handling.mode sends them (Debezium's CommonConnectorConfig
 * BinaryHandlingMode and JdbcValueConverters.convertBinaryTo*), for bytea columns and
 * for columns sent by include.unknown.datatypes:
 *   bytes            BYTES, the bytes themselves
 *   base64           STRING, java.util.Base64.getEncoder(): standard alphabet, '=' padding
 *   base64-url-safe  STRING, Base64.getUrlEncoder(): '-' and '_' for '+' and '/', padding
 *                    kept (Node's 'base64url' drops it, so it is not used)
 *   hex              STRING, two lower-case digits a byte (Debezium's HexConverter)
 * Also bit strings of bit(n > 1) and varbit, as Debezium's io.debezium.data.Bits.
 */
import { type Schema, Schemas } from '../../../src/connect/api/index.ts';

export type BinaryHandlingMode = 'bytes' | 'base64' | 'base64-url-safe' | 'hex';

export interface BinaryEncoding {
  schema: Schema;
  encode(bytes: Buffer): unknown;
}

export function binaryEncoding(mode: BinaryHandlingMode): BinaryEncoding {
  switch (mode) {
    case 'bytes':
      return { schema: Schemas.bytes(), encode: (b) => b };
    case 'base64':
      return { schema: Schemas.string(), encode: (b) => b.toString('base64') };
    case 'base64-url-safe':
      return {
        schema: Schemas.string(),
        encode: (b) => b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
      };
    case 'hex':
      return { schema: Schemas.string(), encode: (b) => b.toString('hex') };
  }
}

/**
 * io.debezium.data.Bits bytes of a bit string ('10110'): the string read as a binary
 * number, its last character bit 0, in little-endian bytes sized to the highest set bit
 * (Debezium's PostgresValueConverter.convertBits builds a BitSet so and sends
 * BitSet.toByteArray(), re-sized to the content, not to the column's length). No bit
 * set gives no bytes.
 */
export function bitsBytes(text: string): Buffer {
  const n = text.length;
  let highest = -1;
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(i) === 49 /* 1 */) {
      highest = n - 1 - i;
      break;
    }
  }
  const out = Buffer.alloc(highest < 0 ? 0 : (highest >> 3) + 1);
  for (let bit = 0; bit <= highest; bit++) {
    if (text.charCodeAt(n - 1 - bit) === 49) out[bit >> 3] |= 1 << (bit & 7);
  }
  return out;
}
