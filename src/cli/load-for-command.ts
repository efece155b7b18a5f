/**
 * Loading a command's config and reporting the result the same way for every command:
 * warnings and errors as one plain line each on stderr. Returns the values, or
 * undefined when there were errors (the caller exits with EXIT_USAGE).
 */
import { formatLoadError, type LoadRequest, loadConfig } from '../config/load.ts';
import {
  type BasicAuthenticator,
  restAuthFromConfig,
  warnIfOpen,
} from '../connect/rest/basic-auth.ts';
import { configureLogging, getLogger } from '../util/logger.ts';
import type { CliContext } from './cli-context.ts';

export function loadForCommand(
  ctx: CliContext,
  request: Omit<LoadRequest, 'env'>,
): Record<string, unknown> | undefined {
  const loaded = loadConfig({ ...request, env: ctx.env });
  for (const warning of loaded.warnings) ctx.err(`warning: ${warning}`);
  for (const error of loaded.errors) ctx.err(`error: ${formatLoadError(error)}`);
  if (loaded.errors.length > 0) return undefined;
  configureLogging(loaded.values);
  return loaded.values;
}

/**
 * The REST authentication rest.extension.classes asks for (null: none), read before
 * anything starts; undefined after printing why it cannot be had (exit EXIT_USAGE).
 */
export function restAuthForCommand(
  ctx: CliContext,
  values: Record<string, unknown>,
): BasicAuthenticator | null | undefined {
  const resolved = restAuthFromConfig(values, ctx.env);
  if ('errors' in resolved) {
    for (const error of resolved.errors) ctx.err(`error: ${error}`);
    return undefined;
  }
  warnIfOpen(resolved.auth, getLogger('connect.rest'));
  return resolved.auth;
}

/** Collects repeated `-o key=value` options for commander. */
export function collectOption(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
