/**
 * Request and response headers, and which header version each API version uses.
 *
 * Request header v0: apiKey int16, apiVersion int16, correlationId int32.
 * v1 adds clientId as a *non-compact* nullable string (int16 length) — it stays
 * non-compact in v2 so a broker can read it before knowing whether the API version
 * is flexible. v2 adds a tagged-field section.
 * Response header v0: correlationId int32; v1 adds a tagged-field section.
 *
 * Flexible API versions use request header v2 and response header v1; others use
 * v1 and v0. ApiVersions responses always use header v0, so a client that sent a
 * version the broker does not know can still read the error (KIP-511).
 */

import type { Reader } from './reader.ts';
import { type ApiSchema, isFlexible } from './schema.ts';
import type { Writer } from './writer.ts';

export const API_VERSIONS_KEY = 18;

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

export function requestHeaderVersion(schema: ApiSchema, apiVersion: number): 1 | 2 {
  return isFlexible(schema, apiVersion) ? 2 : 1;
}

export function responseHeaderVersion(schema: ApiSchema, apiVersion: number): 0 | 1 {
  if (schema.apiKey === API_VERSIONS_KEY) return 0;
  return isFlexible(schema, apiVersion) ? 1 : 0;
}

/** Skips a tagged-field section; header tags carry nothing this codebase uses. */
export function skipTaggedFields(r: Reader): void {
  const count = r.uvarint();
  if (count * 2 > r.remaining) {
    r.fail(`tagged field count ${count} exceeds remaining bytes`);
    return;
  }
  for (let i = 0; i < count && r.ok; i++) {
    r.uvarint();
    r.skip(r.uvarint());
  }
}

/** Reads the fixed prefix every request header version shares. */
export function readRequestHeaderPrefix(r: Reader): {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
} {
  return { apiKey: r.int16(), apiVersion: r.int16(), correlationId: r.int32() };
}

export function writeRequestHeader(w: Writer, header: RequestHeader, version: 0 | 1 | 2): void {
  w.int16(header.apiKey);
  w.int16(header.apiVersion);
  w.int32(header.correlationId);
  if (version >= 1) w.nullableString(header.clientId);
  if (version >= 2) w.uvarint(0);
}

export function writeResponseHeader(w: Writer, correlationId: number, version: 0 | 1): void {
  w.int32(correlationId);
  if (version >= 1) w.uvarint(0);
}
