/**
 * What every REST resource is given: the herder it delegates to and the worker settings
 * that change answers without involving the herder.
 */
import type { Herder } from '../herder/herder.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import type { LoggerLevels } from './logger-levels.ts';

export interface RestContext {
  herder: Herder;
  plugins: PluginRegistry;
  /** Kafka Connect's topic.tracking.enable and topic.tracking.allow.reset (both default true). */
  topicTracking: { enabled: boolean; allowReset: boolean };
  loggerLevels: LoggerLevels;
  /** GET / answers these with the herder's Kafka cluster id. */
  serverInfo: { version: string; commit: string };
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
