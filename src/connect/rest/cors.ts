/**
 * CORS, as Kafka Connect's RestServer sets it up: when the worker key
 * `access.control.allow.origin` is not blank, Jetty's CrossOriginFilter runs before
 * every resource, with `access.control.allow.methods` as its allowed methods when that
 * is not blank (else Jetty's default, GET,POST,HEAD) and Jetty's other defaults:
 *   - allowed origins: a comma list; `*` alone allows any origin; a `*` inside an
 *     entry matches any text (`https://*.example.com`);
 *   - a request whose Origin matches gets `Access-Control-Allow-Origin: <its origin>`
 *     (the origin itself, even with `*`), `Access-Control-Allow-Credentials: true`, and
 *     `Vary: Origin` unless any origin is allowed;
 *   - a preflight (OPTIONS with Access-Control-Request-Method) whose method is allowed
 *     and whose requested headers are among X-Requested-With, Content-Type, Accept and
 *     Origin also gets Access-Control-Max-Age 1800, -Allow-Methods and -Allow-Headers;
 *     a method or header not allowed gets no CORS header at all, and the browser
 *     refuses the request;
 *   - an Origin that does not match gets nothing; the request is still served.
 * The preflight then goes on to the resources, as the filter chains it
 * (chainPreflight): OPTIONS on a known path is answered 200 with an Allow header, as
 * Jersey answers OPTIONS, and an unknown path stays 404.
 */
import type { FastifyInstance } from 'fastify';
import type { KnownPaths } from './known-paths.ts';

export interface CorsOptions {
  /** access.control.allow.origin; blank disables CORS. */
  allowedOrigins: string;
  /** access.control.allow.methods; blank means GET,POST,HEAD. */
  allowedMethods: string;
}

const DEFAULT_METHODS = ['GET', 'POST', 'HEAD'];
const ALLOWED_HEADERS = ['X-Requested-With', 'Content-Type', 'Accept', 'Origin'];
/** Jetty's default preflightMaxAge: browsers may cache a preflight answer 30 minutes. */
const PREFLIGHT_MAX_AGE_S = 1800;

function csv(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A matcher for the Origin header, or undefined when CORS is disabled. */
function originMatcher(
  allowed: string,
): { any: boolean; test(origin: string): boolean } | undefined {
  const entries = csv(allowed);
  if (entries.length === 0) return undefined;
  if (entries.includes('*')) return { any: true, test: () => true };
  const patterns = entries.map((e) =>
    e.includes('*')
      ? new RegExp(`^${e.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
      : e,
  );
  return {
    any: false,
    // The Origin header may list several origins separated by spaces.
    test: (origin) =>
      origin
        .split(' ')
        .filter((o) => o.trim() !== '')
        .some((o) => patterns.some((p) => (typeof p === 'string' ? p === o : p.test(o)))),
  };
}

/** CORS headers per cors options, and Jersey's answer to OPTIONS on known paths. */
export function installCors(
  app: FastifyInstance,
  knownPaths: KnownPaths,
  options: CorsOptions | undefined,
): void {
  const origins = originMatcher(options?.allowedOrigins ?? '');
  const methods =
    csv(options?.allowedMethods ?? '').length > 0
      ? csv(options?.allowedMethods ?? '')
      : DEFAULT_METHODS;
  const allowedHeaders = ALLOWED_HEADERS.map((h) => h.toLowerCase());

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    const requestMethod = request.headers['access-control-request-method'];
    if (origins !== undefined && typeof origin === 'string' && origins.test(origin)) {
      const preflight = request.method === 'OPTIONS' && requestMethod !== undefined;
      const requestedHeaders = csv(String(request.headers['access-control-request-headers'] ?? ''));
      const allowed =
        !preflight ||
        (methods.includes(String(requestMethod)) &&
          requestedHeaders.every((h) => allowedHeaders.includes(h.toLowerCase())));
      if (allowed) {
        reply.header('access-control-allow-origin', origin);
        if (!origins.any) reply.header('vary', 'Origin');
        reply.header('access-control-allow-credentials', 'true');
        if (preflight) {
          reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S));
          reply.header('access-control-allow-methods', methods.join(','));
          reply.header('access-control-allow-headers', ALLOWED_HEADERS.join(','));
        }
      }
    }
    if (request.method === 'OPTIONS' && knownPaths.has(request.url)) {
      const allow = [...knownPaths.methods(request.url), 'OPTIONS'];
      return reply.code(200).header('allow', allow.join(',')).send();
    }
  });
}
