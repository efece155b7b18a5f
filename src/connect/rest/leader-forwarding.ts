/**
 * Forwarding a request to the leader, as Kafka Connect's HerderRequestHandler does when
 * the herder answers "not leader" (a RequestTargetException):
 *   - the request goes to `<leader URL><same path>` with the same method, JSON body and
 *     query, plus `forward=true` when the request came from a user (no `forward` in its
 *     query) and `forward=false` when it was already forwarded once; a request carrying
 *     `forward=false` (or any value but `true`: Boolean.valueOf) is never forwarded
 *     again (two hops at most: a second "not leader" means the cluster is
 *     rebalancing, answered 409);
 *   - the leader's status and body are answered as they are, errors included, so the
 *     user sees the leader's verdict; a Location (201 Created) is kept, made absolute
 *     against the URL the user called, as Connect builds it on the worker asked.
 * No leader known (mid-rebalance): 409. The leader unreachable: 500, with Connect's text.
 */
import type { FastifyRequest } from 'fastify';
import { parseQueryBoolean } from './query-booleans.ts';
import { absoluteUrl } from './rest-context.ts';
import { type ErrorResponse, restMessages } from './rest-errors.ts';

export interface ForwardedResponse {
  status: number;
  /** Parsed JSON, or undefined for an empty body (204, 202). */
  body: unknown;
  /**
   * The leader's Location (a created connector), with the leader's base URL replaced
   * by the one the user called: Kafka Connect builds Location on the worker the user
   * asked, after the forward, so it names that worker.
   */
  location?: string;
}

/** Decide and perform the forward; an error body when it may not or cannot happen. */
export async function forwardToLeader(
  request: FastifyRequest,
  leaderUrl: string | undefined,
  timeoutMs: number,
): Promise<ForwardedResponse> {
  const query = new URLSearchParams(
    request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '',
  );
  // Connect's `Boolean forward`: absent is a user's request, any value but (any case
  // of) "true" is false, i.e. already forwarded once.
  const forward = query.get('forward');
  if (forward !== null && !parseQueryBoolean(forward)) {
    return errorOf(409, restMessages.secondHop);
  }
  if (leaderUrl === undefined || leaderUrl === '') return errorOf(409, restMessages.noLeaderUrl);

  query.set('forward', String(forward === null));
  const path = request.url.split('?')[0];
  const target = `${leaderUrl.replace(/\/+$/, '')}${path}?${query.toString()}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  const authorization = request.headers.authorization;
  if (authorization !== undefined) headers.authorization = authorization;
  const hasBody = request.body !== undefined && request.body !== null;
  if (hasBody) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(target, {
      method: request.method,
      headers,
      body: hasBody ? JSON.stringify(request.body) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const body = text === '' ? undefined : JSON.parse(text);
    const leaderLocation = res.headers.get('location');
    if (leaderLocation === null) return { status: res.status, body };
    const { pathname, search } = new URL(leaderLocation, target);
    return { status: res.status, body, location: absoluteUrl(request, `${pathname}${search}`) };
  } catch (e) {
    return errorOf(500, `IO Error trying to forward REST request: ${(e as Error).message}`);
  }
}

function errorOf(status: number, message: string): ErrorResponse {
  return { status, body: { error_code: status, message } };
}
