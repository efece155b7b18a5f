/**
 * The contract between the broker's request router and the per-API handlers.
 *
 * A handler gets the decoded request body (src/protocol naming: Kafka's JSON field
 * names in lowerCamelCase, int64 as bigint) and the request context, and returns the
 * response body for the same API version, or null to send no response at all
 * (Produce with acks=0). Handlers never throw for bad client input: they answer with
 * Kafka error codes. A thrown error is a broken invariant; the router logs it and
 * closes the connection.
 *
 * Handlers run on the broker thread; they may await (fsync, long poll, rebalance).
 */
import type { Message } from '../../protocol/codec.ts';
import type { ConnectionInfo } from '../server/socket-server.ts';

export interface RequestContext {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly connection: ConnectionInfo;
}

export type RequestHandler<Services> = (
  body: Message,
  context: RequestContext,
  services: Services,
) => Message | null | Promise<Message | null>;
