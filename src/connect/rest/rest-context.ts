/**
 * What every REST resource is given: the herder it delegates to and the worker settings
 * that change answers without involving the herder.
 */
import type { FastifyRequest } from 'fastify';
import type { Herder } from '../herder/herder.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import type { LoggerLevels } from './logger-levels.ts';
import type { BuildInfo } from './server-info.ts';

export interface RestContext {
  herder: Herder;
  plugins: PluginRegistry;
  /** Kafka Connect's topic.tracking.enable and topic.tracking.allow.reset (both default true). */
  topicTracking: { enabled: boolean; allowReset: boolean };
  loggerLevels: LoggerLevels;
  /** This project's version and commit, for GET / (server-info.ts). */
  serverInfo: BuildInfo;
}

/** Connector name path parameter, shared by every /connectors/{name}/... route. */
export const connectorParams = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
} as const;

/** A connector config in a request body: string values (numbers and booleans are coerced). */
export const connectorConfigSchema = {
  type: 'object',
  additionalProperties: { type: ['string', 'null'] },
} as const;

/**
 * `path` made absolute against the URL the client used (scheme, Host header), as
 * JAX-RS's Response.created resolves a relative Location against the request's base
 * URI: `http://localhost:8083/connectors/x` for a client that called localhost:8083.
 */
export function absoluteUrl(request: FastifyRequest, path: string): string {
  const host = request.host || `${request.hostname}`;
  return `${request.protocol}://${host}${path}`;
}
