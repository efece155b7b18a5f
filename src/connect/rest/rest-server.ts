/**
 * The Kafka Connect REST API server: one fastify app (routes in one file per resource)
 * per listener, answering Kafka Connect's paths, bodies, status codes and error body
 * `{"error_code": N, "message": "..."}`, so kcctl, Debezium UI and scripts work.
 *
 * Request flow: fastify parses JSON (an empty body counts as no body, as Jersey reads
 * it, so `curl -X PUT -H 'Content-Type: application/json' .../pause` works), checks the
 * route's JSON schema, the route asks the herder, and any error goes through one error
 * handler: `not-leader` herder errors are forwarded to the leader (leader-forwarding.ts),
 * everything else is mapped by rest-errors.ts.
 *
 * Lifecycle: startRestServer listens and resolves once every listener is bound;
 * close() stops accepting, closes every connection with no request in flight (see
 * dropWhenClosing), waits for in-flight requests and resolves when all are closed.
 * Nothing else is left running.
 */
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { parseListener } from '../../config/validators.ts';
import type { Logger } from '../../util/logger.ts';
import type { Herder } from '../herder/herder.ts';
import { isHerderError } from '../herder/herder.ts';
import type { ConnectMetrics } from '../metrics/connect-metrics.ts';
import { registerMetricsResource } from '../metrics/metrics-resource.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import { type BasicAuthenticator, installBasicAuth } from './basic-auth.ts';
import { registerConnectorOffsetsResource } from './connector-offsets-resource.ts';
import { registerConnectorPluginsResource } from './connector-plugins-resource.ts';
import { registerConnectorStateResource } from './connector-state-resource.ts';
import { registerConnectorsResource } from './connectors-resource.ts';
import { type CorsOptions, installCors } from './cors.ts';
import { registerHealthResource } from './health-resource.ts';
import { KnownPaths } from './known-paths.ts';
import { forwardToLeader } from './leader-forwarding.ts';
import { LoggerLevels } from './logger-levels.ts';
import { registerLoggersResource } from './loggers-resource.ts';
import { installQueryBooleans } from './query-booleans.ts';
import type { RestContext } from './rest-context.ts';
import { errorResponse, restMessages } from './rest-errors.ts';
import { registerRootResource } from './root-resource.ts';
import { type BuildInfo, buildInfo } from './server-info.ts';
import { registerUiResource, type UiKafka } from './ui-resource.ts';

/** Kafka Connect's REQUEST_TIMEOUT_MS: a forwarded request may wait out a rebalance. */
const FORWARD_TIMEOUT_MS = 90_000;

export interface RestAppOptions {
  herder: Herder;
  plugins: PluginRegistry;
  logger: Logger;
  topicTracking?: { enabled: boolean; allowReset: boolean };
  loggerLevels?: LoggerLevels;
  /** This project's version and commit; by default package.json's and .git's. */
  serverInfo?: BuildInfo;
  forwardTimeoutMs?: number;
  /** access.control.allow.origin / .methods (cors.ts); absent or blank: no CORS. */
  cors?: CorsOptions;
  /** GET /health's wait for the herder loop; Kafka's 10 s by default. */
  healthCheckTimeoutMs?: number;
  /** Served on GET /metrics (Prometheus text); absent: no /metrics route. */
  metrics?: ConnectMetrics;
  /** The status page's reads of topics and groups (the worker); absent: those answer 503. */
  kafka?: UiKafka;
  /** rest.extension.classes' Basic authentication (basic-auth.ts); absent or null: none. */
  auth?: BasicAuthenticator | null;
}

export interface RestServerOptions extends RestAppOptions {
  /** `listeners` values, e.g. `http://:8083` or `http://127.0.0.1:0` (port 0: any free port). */
  listeners: readonly string[];
}

export interface RestServer {
  /** Base URL of the first listener, with the port actually bound. */
  url: string;
  /** Base URLs of every listener. */
  urls: string[];
  close(): Promise<void>;
}

/** Build the app without listening (tests use `inject`). */
export function buildRestApp(options: RestAppOptions): FastifyInstance {
  const ctx: RestContext = {
    herder: options.herder,
    plugins: options.plugins,
    topicTracking: options.topicTracking ?? { enabled: true, allowReset: true },
    loggerLevels: options.loggerLevels ?? new LoggerLevels(),
    serverInfo: options.serverInfo ?? buildInfo(),
  };
  const { logger } = options;
  const forwardTimeoutMs = options.forwardTimeoutMs ?? FORWARD_TIMEOUT_MS;
  const app = Fastify({
    // pino's Logger is fastify's logger type at run time; the declared types differ.
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request info lines would drown the worker's log; errors are logged below.
    logController: new LogController({ disableRequestLogging: true }),
    // Jersey serves /connectors/ as /connectors.
    routerOptions: { ignoreTrailingSlash: true },
  });

  // JSON only, as Connect's resources @Consumes it: other media types are 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const error = new Error(`Invalid JSON in request body: ${(e as Error).message}`);
      (error as Error & { code: string }).code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(error, undefined);
    }
  });

  app.setErrorHandler(async (error, request, reply) => {
    if (isHerderError(error) && error.kind === 'not-leader') {
      const forwarded = await forwardToLeader(request, error.leaderUrl, forwardTimeoutMs);
      reply.code(forwarded.status);
      if (forwarded.location !== undefined) reply.header('location', forwarded.location);
      return forwarded.body === undefined ? reply.send() : reply.send(forwarded.body);
    }
    const { status, body } = errorResponse(error);
    if (status >= 500)
      logger.error(
        { err: error, url: request.url },
        `Uncaught exception in REST call to ${request.url}`,
      );
    else
      logger.debug(
        { err: error, url: request.url },
        `REST call to ${request.url} failed: ${body.message}`,
      );
    return reply.code(status).send(body);
  });

  installQueryBooleans(app);

  // A known path with another method is Jersey's 405; only unknown paths are 404.
  const knownPaths = new KnownPaths();
  app.addHook('onRoute', (route) => knownPaths.add(route.url, route.method));
  app.setNotFoundHandler(async (request, reply) =>
    knownPaths.has(request.url)
      ? reply.code(405).send({ error_code: 405, message: restMessages.methodNotAllowed })
      : reply.code(404).send({ error_code: 404, message: restMessages.notFound }),
  );

  installCors(app, knownPaths, options.cors);
  if (options.auth) installBasicAuth(app, options.auth);

  registerRootResource(app, ctx);
  registerHealthResource(app, ctx, options.healthCheckTimeoutMs);
  registerConnectorsResource(app, ctx);
  registerConnectorStateResource(app, ctx);
  registerConnectorOffsetsResource(app, ctx);
  registerConnectorPluginsResource(app, ctx);
  registerLoggersResource(app, ctx);
  if (options.metrics !== undefined) registerMetricsResource(app, options.metrics);
  registerUiResource(app, logger, options.kafka);
  return app;
}

/** Listen on every listener; rejects (closing what was opened) if one cannot bind. */
export async function startRestServer(options: RestServerOptions): Promise<RestServer> {
  if (options.listeners.length === 0) throw new Error('no REST listeners configured');
  const apps: FastifyInstance[] = [];
  const dropIdle: Array<() => void> = [];
  const urls: string[] = [];
  try {
    for (const text of options.listeners) {
      const listener = parseListener(text);
      if (listener === undefined) throw new Error(`invalid REST listener ${text}`);
      if (listener.protocol === 'https') {
        throw new Error(`REST listener ${text}: https listeners are not supported yet; use http`);
      }
      const app = buildRestApp(options);
      apps.push(app);
      dropIdle.push(dropWhenClosing(app));
      // An empty host listens on every interface, as Kafka Connect's listeners do.
      const host = listener.host === '' ? '0.0.0.0' : listener.host.replace(/^\[|\]$/g, '');
      await app.listen({ host, port: listener.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : listener.port;
      const shownHost = listener.host === '' ? 'localhost' : listener.host;
      urls.push(`http://${shownHost}:${port}`);
      options.logger.info(`REST server listening on ${urls[urls.length - 1]}`);
    }
  } catch (e) {
    await Promise.all(apps.map((a) => a.close()));
    throw e;
  }
  return {
    url: urls[0],
    urls,
    close: async () => {
      for (const drop of dropIdle) drop();
      await Promise.all(apps.map((a) => a.close()));
    },
  };
}

/**
 * Node's server.close(), which fastify's close() calls, ends the keep-alive
 * connections that sit between requests, but not a connection that has not sent a
 * whole request: a browser's speculative preconnect, a client that stalled. Such a
 * connection held close(), hence the worker's shutdown, until the client gave up or
 * Node's headersTimeout (60 s) ended it, past the shutdown's 30 s: one open browser
 * tab could turn SIGINT into a forced exit. It has nothing in flight to wait for, so
 * the returned function (called when closing) destroys every connection that is not
 * handling a request, and any that arrives afterwards.
 */
function dropWhenClosing(app: FastifyInstance): () => void {
  const open = new Set<Socket>();
  const handling = new Set<Socket>();
  let closing = false;
  app.server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      handling.delete(socket);
    });
  });
  app.server.on('request', (request, response) => {
    const socket = request.socket;
    handling.add(socket);
    response.once('close', () => handling.delete(socket));
  });
  return () => {
    closing = true;
    for (const socket of open) if (!handling.has(socket)) socket.destroy();
  };
}
