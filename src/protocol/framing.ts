/**
 * Whole-message framing for both sides of a Kafka connection.
 *
 * Wire format: every request and response is `size int32` followed by `size` bytes:
 * a header (headers.ts) and a body (codec.ts). "Frame" below means the bytes after
 * the size prefix; the TCP server splits the stream into frames (and enforces
 * socket.request.max.bytes) before calling decodeRequest.
 *
 * Server side: decodeRequest(frame) -> the header and body, or a RequestDecodeError
 * value with a kind (unsupported-api, unsupported-version, malformed) and the
 * correlation id whenever the fixed header prefix could be read, so the server
 * can answer (ApiVersions: the v0 UNSUPPORTED_VERSION reply) or close the
 * connection. encodeResponse / encodeResponseChunks add header and size prefix.
 * Client side: encodeRequest, peekCorrelationId, decodeResponse.
 *
 * Nothing here throws on wire input; encoders throw only on programming errors
 * (an unknown api or version, a null in a non-nullable field).
 */

import { schemaFor } from './api-keys.ts';
import { decodeBody, type Message, planFor, type StructPlan } from './codec.ts';
import {
  API_VERSIONS_KEY,
  readRequestHeaderPrefix,
  requestHeaderVersion,
  responseHeaderVersion,
  skipTaggedFields,
  writeRequestHeader,
  writeResponseHeader,
} from './headers.ts';
import { Reader } from './reader.ts';
import type { ApiSchema } from './schema.ts';
import { Writer } from './writer.ts';

export interface DecodedRequest {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: Message;
}

export type RequestDecodeErrorKind = 'unsupported-api' | 'unsupported-version' | 'malformed';

/** Why a request frame could not be decoded; a value, not a thrown exception. */
export interface RequestDecodeError {
  kind: RequestDecodeErrorKind;
  /** Null when the frame was too short to hold the fixed header prefix. */
  apiKey: number | null;
  apiVersion: number | null;
  correlationId: number | null;
  clientId: string | null;
  reason: string;
}

export type RequestDecodeResult =
  | { ok: true; request: DecodedRequest }
  | { ok: false; error: RequestDecodeError };

/** Kafka's UNSUPPORTED_VERSION error code (error-codes.ts). */
const UNSUPPORTED_VERSION = 35;

/** Fixed request header prefix: apiKey int16, apiVersion int16, correlationId int32. */
const REQUEST_HEADER_PREFIX = 8;

export function decodeRequest(frame: Buffer): RequestDecodeResult {
  const r = new Reader(frame);
  if (frame.length < REQUEST_HEADER_PREFIX) {
    return fail(
      'malformed',
      null,
      null,
      null,
      null,
      `frame of ${frame.length} bytes is shorter than a request header`,
    );
  }
  const { apiKey, apiVersion, correlationId } = readRequestHeaderPrefix(r);
  const schema = schemaFor(apiKey);
  if (schema === undefined) {
    return fail(
      'unsupported-api',
      apiKey,
      apiVersion,
      correlationId,
      null,
      `api key ${apiKey} is not implemented`,
    );
  }
  if (apiVersion < schema.minVersion || apiVersion > schema.maxVersion) {
    // Read the client id anyway when it is there: it helps the log line.
    const clientId = r.nullableString();
    return fail(
      'unsupported-version',
      apiKey,
      apiVersion,
      correlationId,
      r.ok ? clientId : null,
      `${schema.name} v${apiVersion} is not implemented (${schema.minVersion}-${schema.maxVersion})`,
    );
  }
  const clientId = r.nullableString();
  if (requestHeaderVersion(schema, apiVersion) >= 2) skipTaggedFields(r);
  if (!r.ok)
    return fail(
      'malformed',
      apiKey,
      apiVersion,
      correlationId,
      null,
      `request header: ${r.failure}`,
    );
  const body = decodeBody(schema, apiVersion, 'request', r);
  if (!body.ok) {
    return fail(
      'malformed',
      apiKey,
      apiVersion,
      correlationId,
      clientId,
      `${schema.name} v${apiVersion} request: ${body.reason}`,
    );
  }
  return { ok: true, request: { apiKey, apiVersion, correlationId, clientId, body: body.value } };
}

function fail(
  kind: RequestDecodeErrorKind,
  apiKey: number | null,
  apiVersion: number | null,
  correlationId: number | null,
  clientId: string | null,
  reason: string,
): { ok: false; error: RequestDecodeError } {
  return { ok: false, error: { kind, apiKey, apiVersion, correlationId, clientId, reason } };
}

function requireSchema(apiKey: number): ApiSchema {
  const schema = schemaFor(apiKey);
  if (schema === undefined) throw new RangeError(`api key ${apiKey} is not implemented`);
  return schema;
}

export interface ResponseToEncode {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  body: Message;
}

/** Bytes a size hint may reserve up front; beyond it the Writer grows as needed. */
const MAX_SIZE_HINT = 1 << 20;

function encodeWithHint(plan: StructPlan, w: Writer, body: Message): void {
  plan.encode(w, body);
  // Large records fields pass through as chunks and need no room in the buffer.
  const buffered = w.length - w.passedThrough;
  if (buffered > plan.sizeHint) plan.sizeHint = Math.min(buffered, MAX_SIZE_HINT);
}

function writeResponse(res: ResponseToEncode): Writer {
  const schema = requireSchema(res.apiKey);
  const plan = planFor(schema, res.apiVersion, 'response');
  const w = new Writer(plan.sizeHint + 16);
  const sizeAt = w.reserveInt32();
  writeResponseHeader(w, res.correlationId, responseHeaderVersion(schema, res.apiVersion));
  encodeWithHint(plan, w, res.body);
  w.patchInt32(sizeAt, w.length - 4);
  return w;
}

/** A response with its size prefix, as one Buffer. */
export function encodeResponse(res: ResponseToEncode): Buffer {
  return writeResponse(res).finish();
}

/**
 * A response with its size prefix as chunks for socket.cork()/write or writev:
 * large records fields are passed through as their own Buffers, uncopied.
 */
export function encodeResponseChunks(res: ResponseToEncode): Buffer[] {
  return writeResponse(res).chunks();
}

export interface RequestToEncode {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: Message;
}

/** A request with its size prefix, as one Buffer (client side). */
export function encodeRequest(req: RequestToEncode): Buffer {
  return requestWriter(req).finish();
}

/**
 * The request frame as chunks for a vectored write: record batches of a Produce
 * request stay the caller's Buffers instead of being copied into the frame.
 */
export function encodeRequestChunks(req: RequestToEncode): Buffer[] {
  return requestWriter(req).chunks();
}

function requestWriter(req: RequestToEncode): Writer {
  const schema = requireSchema(req.apiKey);
  if (req.apiVersion < schema.minVersion || req.apiVersion > schema.maxVersion) {
    throw new RangeError(`${schema.name} v${req.apiVersion} is not implemented`);
  }
  const plan = planFor(schema, req.apiVersion, 'request');
  const w = new Writer(
    plan.sizeHint + 16 + (req.clientId === null ? 0 : Buffer.byteLength(req.clientId)),
  );
  const sizeAt = w.reserveInt32();
  writeRequestHeader(w, req, requestHeaderVersion(schema, req.apiVersion));
  encodeWithHint(plan, w, req.body);
  w.patchInt32(sizeAt, w.length - 4);
  return w;
}

/** The correlation id of a response frame, to match it with its request; null if too short. */
export function peekCorrelationId(frame: Buffer): number | null {
  return frame.length < 4 ? null : frame.readInt32BE(0);
}

export type ResponseDecodeResult =
  | { ok: true; correlationId: number; body: Message }
  | { ok: false; correlationId: number | null; reason: string };

/**
 * Decodes a response frame (client side) for the api and version that was requested.
 * An ApiVersions refusal in the v0 format is accepted for any requested version.
 */
export function decodeResponse(
  frame: Buffer,
  apiKey: number,
  apiVersion: number,
): ResponseDecodeResult {
  const schema = requireSchema(apiKey);
  const r = new Reader(frame);
  const correlationId = r.int32();
  if (!r.ok)
    return { ok: false, correlationId: null, reason: 'frame shorter than a response header' };
  if (responseHeaderVersion(schema, apiVersion) >= 1) skipTaggedFields(r);
  const bodyStart = r.offset;
  const body = decodeBody(schema, apiVersion, 'response', r);
  if (body.ok) return { ok: true, correlationId, body: body.value };
  // KIP-511: a broker that does not know this ApiVersions version answers in the v0
  // format with UNSUPPORTED_VERSION, so the client can retry with a version it lists.
  if (apiKey === API_VERSIONS_KEY && apiVersion > 0 && frame.length >= bodyStart + 2) {
    if (frame.readInt16BE(bodyStart) === UNSUPPORTED_VERSION) {
      const v0 = decodeBody(schema, 0, 'response', new Reader(frame, bodyStart));
      if (v0.ok) return { ok: true, correlationId, body: v0.value };
    }
  }
  return {
    ok: false,
    correlationId,
    reason: `${schema.name} v${apiVersion} response: ${body.reason}`,
  };
}
