/**
 * The value functions of Debezium's column masks (MaskStrings, TruncateStrings), as
 * Debezium computes them, so that masked and hashed values equal Debezium's byte for
 * byte and a consumer can join them with values Debezium produced:
 *
 *   mask      the value (null included) becomes N '*' characters
 *   truncate  a string longer than N UTF-16 code units is cut to its first N (Java's
 *             String.substring, which is what JavaScript's slice counts too)
 *   hash      hex(digest(salt bytes ‖ value bytes)), lower case; null stays null. The
 *             value bytes are, by hashing strategy:
 *               v1  Java serialization of the String (ObjectOutputStream.writeObject):
 *                   stream header AC ED 00 05, then TC_STRING 0x74 with a 2-byte length
 *                   (TC_LONGSTRING 0x7C with an 8-byte length past 65535 bytes) and the
 *                   string in Java's modified UTF-8
 *               v2  the string's UTF-8 bytes (String.getBytes() on a UTF-8 JVM)
 *             The salt is the UTF-8 bytes of the text in the key's name.
 * Algorithms are Java's MessageDigest names (matched case-insensitively, as the JCA
 * matches them), each mapped to node:crypto's name for the same digest.
 */
import { createHash, getHashes } from 'node:crypto';

export type HashingStrategy = 'v1' | 'v2';

/** Java MessageDigest names (upper-cased) and their aliases, to node:crypto's names. */
const JAVA_DIGESTS: Readonly<Record<string, string>> = {
  MD5: 'md5',
  'SHA-1': 'sha1',
  SHA: 'sha1',
  SHA1: 'sha1',
  'SHA-224': 'sha224',
  SHA224: 'sha224',
  'SHA-256': 'sha256',
  SHA256: 'sha256',
  'SHA-384': 'sha384',
  SHA384: 'sha384',
  'SHA-512': 'sha512',
  SHA512: 'sha512',
  'SHA-512/224': 'sha512-224',
  'SHA-512/256': 'sha512-256',
  'SHA3-224': 'sha3-224',
  'SHA3-256': 'sha3-256',
  'SHA3-384': 'sha3-384',
  'SHA3-512': 'sha3-512',
};

/** node:crypto's name of a Java MessageDigest algorithm, or null when it has none here. */
export function digestName(javaAlgorithm: string): string | null {
  const name = JAVA_DIGESTS[javaAlgorithm.toUpperCase()];
  return name !== undefined && getHashes().includes(name) ? name : null;
}

/** The Java MessageDigest names accepted, for error messages. */
export const JAVA_DIGEST_NAMES = Object.keys(JAVA_DIGESTS).filter(
  (n) => n.includes('-') || n === 'MD5',
);

/** Java's modified UTF-8 (DataOutput.writeUTF without its length): NUL and surrogates as Java writes them. */
function modifiedUtf8(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) out.push(c);
    else if (c <= 0x7ff) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

/** The bytes ObjectOutputStream.writeObject writes for a String, stream header included. */
export function javaSerializedString(s: string): Buffer {
  const utf = modifiedUtf8(s);
  let head: Buffer;
  if (utf.length <= 0xffff) {
    head = Buffer.alloc(7);
    head[4] = 0x74; // TC_STRING
    head.writeUInt16BE(utf.length, 5);
  } else {
    head = Buffer.alloc(13);
    head[4] = 0x7c; // TC_LONGSTRING
    head.writeBigUInt64BE(BigInt(utf.length), 5);
  }
  head.writeUInt32BE(0xaced0005, 0); // STREAM_MAGIC, STREAM_VERSION
  return Buffer.concat([head, utf]);
}

/** The hash function of column.mask.hash.<algorithm>.with.salt.<salt>. */
export function hasher(
  digest: string,
  salt: string,
  strategy: HashingStrategy,
): (value: string) => string {
  const saltBytes = Buffer.from(salt, 'utf8');
  return (value) =>
    createHash(digest)
      .update(saltBytes)
      .update(strategy === 'v1' ? javaSerializedString(value) : Buffer.from(value, 'utf8'))
      .digest('hex');
}

export function truncated(value: string, maxLength: number): string {
  return value.length > maxLength ? value.slice(0, maxLength) : value;
}
