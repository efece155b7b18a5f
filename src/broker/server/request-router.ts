/**
 * The request router: one request frame in, one response frame (or none) out.
 *
 *   frame -> decodeRequest -> handler by api key -> encodeResponseChunks
 *
 * What is answered, and how:
 * - A version the broker advertises for an api with a handler: the handler's answer,
 *   encoded for that version (chunks, so Fetch's stored batches pass through
 *   uncopied); `null` from the handler sends nothing (Produce acks=0).
 * - ApiVersions v0-v4: answered in the version asked (handlers/api-versions.ts), with
 *   the broker's features from v3. A version above that, which the codec cannot read:
 *   the v0-format UNSUPPORTED_VERSION reply (KIP-511) listing what is advertised, so
 *   the client retries with a version in range.
 * - Anything else (unknown api, unadvertised version, malformed frame): logged and the
 *   connection closed. A request the broker cannot read leaves it unable to keep the
 *   connection's responses in order, and a client waiting on an answer that never
 *   comes would hang; closing makes it reconnect and renegotiate.
 * - A handler that throws has broken an invariant: logged, connection closed.
 *
 * Frames are lent by the socket server and reused once released (socket-server.ts),
 * and decoded `bytes` and `records` fields are views of the frame. Only Produce, which
 * carries the large frames, is known to keep no view once answered (produce.ts): it
 * is decoded in place and its frame released once the answer is encoded, and never
 * on a failure, which closes the connection and drops its frames with it. Every other
 * api is decoded from a copy and its frame released at once, so a handler that keeps
 * a view (group member metadata lives as long as the group) needs no care; these
 * requests are small.
 *
 * Answers borrow buffers the other way: `context.connection.answerBuffers` belong to
 * this request's answer, and the socket server takes them back once it has written
 * it (answer-buffers.ts). Fetch reads stored batches into them, and the encoded
 * answer passes those on uncopied, so nothing here may keep an answer after
 * returning it.
 *
 * Runs on the broker thread; handlers may be async, ordering is the socket server's.
 */
import { ApiKey, type ApiVersionRange, supportedApiVersions } from '../../protocol/api-keys.ts';
import type { Message } from '../../protocol/codec.ts';
import { decodeRequest, encodeResponse, encodeResponseChunks } from '../../protocol/framing.ts';
import type { Logger } from '../../util/logger.ts';
import { apiVersionsAnswer, apiVersionsRefusal } from '../handlers/api-versions.ts';
import type { RequestContext, RequestHandler } from '../handlers/handler.ts';
import { ADVERTISED_MAX_VERSION } from './advertised-versions.ts';
import type { ConnectionInfo, FrameAnswer, FrameHandler } from './socket-server.ts';

export interface RequestRouter {
  /** The FrameHandler for the socket server. */
  handle: FrameHandler;
  /** What ApiVersions answers: api keys with a handler, narrowed to the advertised versions. */
  readonly advertised: readonly ApiVersionRange[];
}

export function createRequestRouter<Services>(
  handlers: ReadonlyMap<number, RequestHandler<Services>>,
  services: Services,
  logger: Logger,
): RequestRouter {
  const limits: Record<number, { min: number; max?: number } | null> = {};
  for (let key = 0; key < 100; key++) {
    limits[key] =
      handlers.has(key) || key === ApiKey.ApiVersions
        ? { min: 0, max: ADVERTISED_MAX_VERSION[key] }
        : null;
  }
  const advertised = supportedApiVersions(limits);
  const ranges = new Map(advertised.map((r) => [r.apiKey, r]));

  const close = (
    connection: ConnectionInfo,
    details: Record<string, unknown>,
    why: string,
  ): 'close' => {
    logger.warn({ connection: connection.remoteAddress, ...details }, `closing connection: ${why}`);
    return 'close';
  };

  const handle: FrameHandler = (lent, connection, release) => {
    const inPlace = lent.length >= 2 && lent.readInt16BE(0) === ApiKey.Produce;
    let frame = lent;
    if (!inPlace) {
      frame = Buffer.from(lent);
      release();
    }
    const decoded = decodeRequest(frame);
    if (!decoded.ok) {
      const e = decoded.error;
      if (
        e.kind === 'unsupported-version' &&
        e.apiKey === ApiKey.ApiVersions &&
        e.correlationId !== null
      ) {
        return refuseApiVersions(e.correlationId);
      }
      return close(
        connection,
        { apiKey: e.apiKey, apiVersion: e.apiVersion, clientId: e.clientId, reason: e.reason },
        e.kind,
      );
    }
    const req = decoded.request;
    const range = ranges.get(req.apiKey);
    if (req.apiKey === ApiKey.ApiVersions) {
      if (req.apiVersion > range!.maxVersion) return refuseApiVersions(req.correlationId);
      return encodeResponse({
        apiKey: req.apiKey,
        apiVersion: req.apiVersion,
        correlationId: req.correlationId,
        body: apiVersionsAnswer(req.apiVersion, advertised),
      });
    }
    const handler = handlers.get(req.apiKey);
    if (
      handler === undefined ||
      range === undefined ||
      req.apiVersion > range.maxVersion ||
      req.apiVersion < range.minVersion
    ) {
      return close(
        connection,
        { apiKey: req.apiKey, apiVersion: req.apiVersion, clientId: req.clientId },
        'api or version not advertised',
      );
    }
    const context: RequestContext = {
      apiKey: req.apiKey,
      apiVersion: req.apiVersion,
      correlationId: req.correlationId,
      clientId: req.clientId,
      connection,
    };
    const encode = (body: Message | null): FrameAnswer => {
      const answer =
        body === null
          ? null
          : encodeResponseChunks({
              apiKey: req.apiKey,
              apiVersion: req.apiVersion,
              correlationId: req.correlationId,
              body,
            });
      if (inPlace) release();
      return answer;
    };
    const failed = (err: unknown): 'close' => {
      logger.error(
        {
          err,
          connection: connection.remoteAddress,
          apiKey: req.apiKey,
          apiVersion: req.apiVersion,
        },
        'closing connection: request handler failed',
      );
      return 'close';
    };
    try {
      const answer = handler(req.body, context, services);
      return answer instanceof Promise ? answer.then(encode, failed) : encode(answer);
    } catch (err) {
      return failed(err);
    }
  };

  /** KIP-511: v0 body and header whatever the request version, error 35. */
  const refuseApiVersions = (correlationId: number): Buffer =>
    encodeResponse({
      apiKey: ApiKey.ApiVersions,
      apiVersion: 0,
      correlationId,
      body: apiVersionsRefusal(advertised),
    });

  return { handle, advertised };
}
