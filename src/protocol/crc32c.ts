/**
 * CRC-32C (Castagnoli), the checksum of record batch v2. The native implementation
 * (@node-rs/crc32, SSE4.2/ARM CRC instructions) runs at several GB/s, which matters
 * because every produced batch is checked on append and every batch is checked again
 * when a log tail is recovered.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** CRC-32C of `bytes`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array): number {
  return nativeCrc32c(bytes) >>> 0;
}
