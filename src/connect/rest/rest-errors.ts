/**
 * The REST layer's error registry: every error a route can end with, mapped to Kafka
 * Connect's status code and body `{"error_code": <status>, "message": "..."}` (the
 * error_code is always the HTTP status, as Connect's ConnectExceptionMapper does).
 *
 * Sources of errors, each mapped once here:
 *   - HerderError (src/connect/herder/herder.ts), by kind;
 *   - RestError, thrown by routes for checks Kafka Connect makes in its resources
 *     (name mismatch, topic tracking disabled, ...);
 *   - fastify's own errors: bad JSON, request schema failures, unsupported media type;
 *   - anything else: 500 with the error's message, logged, as Connect does.
 * `not-leader` is not mapped here: rest-server.ts forwards those to the leader first
 * and only asks for a mapping when forwarding is not possible.
 */

import { type HerderErrorKind, isHerderError } from '../herder/herder.ts';
import { configErrorMessages } from '../runtime/config-validation.ts';

export interface ErrorBody {
  error_code: number;
  message: string;
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
}

/** An error a route raises itself, with the status Kafka Connect gives in that case. */
export class RestError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'RestError';
    this.status = status;
  }
}

/** Kafka Connect's texts for conditions with a fixed message. */
export const restMessages = {
  noLeaderUrl:
    'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.',
  secondHop: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
  staleConfig:
    'Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)',
  timedOut: 'Request timed out',
  notFound: 'HTTP 404 Not Found',
  methodNotAllowed: 'HTTP 405 Method Not Allowed',
  unsupportedMediaType: 'HTTP 415 Unsupported Media Type',
  topicTrackingDisabled: 'Topic tracking is disabled.',
  topicTrackingResetDisabled: 'Topic tracking reset is disabled.',
  invalidConfigHint:
    'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
} as const;

/** Status per herder error kind; a null message keeps the herder's own text. */
const herderErrors: Record<HerderErrorKind, { status: number; message: string | null }> = {
  'not-found': { status: 404, message: null },
  'already-exists': { status: 409, message: null },
  'bad-request': { status: 400, message: null },
  'invalid-config': { status: 400, message: null },
  'not-leader': { status: 409, message: restMessages.noLeaderUrl },
  'rebalance-needed': { status: 409, message: restMessages.staleConfig },
  conflict: { status: 409, message: null },
  timeout: { status: 500, message: restMessages.timedOut },
};

/**
 * fastify's own error codes that are the client's fault, by code. Deliberately not
 * Kafka's status here: Kafka Connect registers Jackson's provider without its
 * exception mappers, so a body that is not JSON, or a value of the wrong type, reaches
 * its catch-all ConnectExceptionMapper and answers 500 with Jackson's text. A 500 tells
 * a client (and its retry logic) the server failed; these are the client's mistakes,
 * so they keep Kafka's body shape with a 400 (413, 415) and a message naming the field.
 */
const fastifyErrors: Record<string, number> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 400,
  FST_ERR_CTP_EMPTY_JSON_BODY: 400,
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 415,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 400,
  FST_ERR_VALIDATION: 400,
};

/** The response for any thrown value. */
export function errorResponse(error: unknown): ErrorResponse {
  if (isHerderError(error)) {
    const entry = herderErrors[error.kind];
    const message =
      error.kind === 'invalid-config' && error.configInfos !== undefined
        ? invalidConfigMessage(configErrorMessages(error.configInfos))
        : (entry.message ?? error.message);
    return response(entry.status, message);
  }
  if (error instanceof RestError) return response(error.status, error.message);
  const e = error as {
    code?: unknown;
    statusCode?: unknown;
    validation?: unknown;
    message?: unknown;
  };
  const message = typeof e?.message === 'string' ? e.message : String(error);
  if (e?.validation !== undefined) return response(400, message);
  if (typeof e?.code === 'string' && e.code in fastifyErrors) {
    const status = fastifyErrors[e.code];
    return response(status, status === 415 ? restMessages.unsupportedMediaType : message);
  }
  return response(500, message);
}

/** AbstractHerder.maybeAddConfigErrors's message. */
export function invalidConfigMessage(errors: readonly string[]): string {
  return [
    `Connector configuration is invalid and contains the following ${errors.length} error(s):`,
    ...errors,
    restMessages.invalidConfigHint,
  ].join('\n');
}

function response(status: number, message: string): ErrorResponse {
  return { status, body: { error_code: status, message } };
}
