/**
 * Loads a config from its three layers, each overriding the one before:
 *   1. a Java .properties file (read with dot-properties: escapes, continuations, `:`),
 *   2. environment variables with a prefix in Confluent's convention (env-names.ts),
 *   3. `-o key=value` options on the command line.
 * The merged strings are then parsed against the definitions. Nothing is thrown for
 * user mistakes: every problem comes back as a LoadError value with a kind, so the CLI
 * can print all of them at once (one line each) and exit with code 2.
 */
import { readFileSync } from 'node:fs';
import { parse as parseProperties } from 'dot-properties';
import {
  type AnyConfigDef,
  type ConfigError,
  formatConfigError,
  parseConfig,
} from './config-def.ts';
import { envOverrides } from './env-names.ts';

/** Where a key's value came from, for messages: a file path, a variable name or `-o`. */
export type Origin =
  | { kind: 'default' }
  | { kind: 'file'; path: string }
  | { kind: 'env'; variable: string }
  | { kind: 'option' };

export type LoadError =
  | { kind: 'unreadable-file'; path: string; reason: string }
  | { kind: 'malformed-option'; text: string }
  | { kind: 'bad-value'; error: ConfigError; origin: Origin };

export interface LoadRequest {
  defs: readonly AnyConfigDef[];
  /** Path of the .properties file; none means defaults, env and options only. */
  file?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** e.g. 'CONNECT_' or 'BROKER_'. */
  envPrefix: string;
  /** Raw `-o` arguments, `key=value` each. */
  options: readonly string[];
  /** Keys under these prefixes are passed through and get no unknown-key warning. */
  passthroughPrefixes?: readonly string[];
  /** Keys accepted without a warning although they have no definition here. */
  ignoredKeys?: readonly string[];
  /** Checks across keys, run only when every key parsed on its own. */
  crossChecks?: (values: Record<string, unknown>) => ConfigError[];
  /**
   * Warnings across keys (a key that another one overrides), run when every key parsed.
   * `given(key)` is undefined for a key left at its default, else where it was set
   * (" (from -o)", " (from environment variable X)", ...; empty when not known).
   */
  crossWarnings?: (
    values: Record<string, unknown>,
    given: (key: string) => string | undefined,
  ) => string[];
}

export interface LoadedConfig {
  /** Typed values of every defined key plus unknown keys as given (strings). */
  values: Record<string, unknown>;
  origins: ReadonlyMap<string, Origin>;
  /** Human-readable warnings (unknown keys, keys that another key overrides). */
  warnings: string[];
  errors: LoadError[];
}

export function loadConfig(request: LoadRequest): LoadedConfig {
  const raw: Record<string, string> = {};
  const origins = new Map<string, Origin>();
  const errors: LoadError[] = [];

  if (request.file !== undefined) {
    const read = readPropertiesFile(request.file);
    if ('reason' in read) {
      errors.push({ kind: 'unreadable-file', path: request.file, reason: read.reason });
    } else {
      for (const [key, value] of Object.entries(read.values)) {
        raw[key] = value;
        origins.set(key, { kind: 'file', path: request.file });
      }
    }
  }
  for (const o of envOverrides(request.env, request.envPrefix)) {
    raw[o.key] = o.value;
    origins.set(o.key, { kind: 'env', variable: o.variable });
  }
  for (const text of request.options) {
    const eq = text.indexOf('=');
    const key = eq > 0 ? text.slice(0, eq).trim() : '';
    if (key === '') {
      errors.push({ kind: 'malformed-option', text });
      continue;
    }
    raw[key] = text.slice(eq + 1);
    origins.set(key, { kind: 'option' });
  }

  const parsed = parseConfig(request.defs, raw);
  const originOf = (key: string): Origin => origins.get(key) ?? { kind: 'default' };
  for (const error of parsed.errors) {
    errors.push({ kind: 'bad-value', error, origin: originOf(error.key) });
  }
  if (parsed.errors.length === 0 && request.crossChecks) {
    for (const error of request.crossChecks(parsed.values)) {
      errors.push({ kind: 'bad-value', error, origin: originOf(error.key) });
    }
  }
  const prefixes = request.passthroughPrefixes ?? [];
  const ignored = new Set(request.ignoredKeys ?? []);
  const warnings = parsed.unknown
    .filter((key) => !ignored.has(key) && !prefixes.some((p) => key.startsWith(p)))
    .map(
      (key) =>
        `The configuration '${key}'${describeOrigin(originOf(key))} was supplied but isn't a known config; it is ignored.`,
    );
  if (parsed.errors.length === 0 && request.crossWarnings) {
    const given = (key: string) => (origins.has(key) ? describeOrigin(originOf(key)) : undefined);
    warnings.push(...request.crossWarnings(parsed.values, given));
  }
  return { values: parsed.values, origins, warnings, errors };
}

/** Read a .properties file into string values; an unreadable file is a value, not a throw. */
export function readPropertiesFile(
  path: string,
): { values: Record<string, string> } | { reason: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { reason: err.code === 'ENOENT' ? 'no such file' : err.message };
  }
  return { values: parseProperties(text) as Record<string, string> };
}

function describeOrigin(origin: Origin): string {
  switch (origin.kind) {
    case 'default':
      return '';
    case 'file':
      return ` (from ${origin.path})`;
    case 'env':
      return ` (from environment variable ${origin.variable})`;
    case 'option':
      return ' (from -o)';
  }
}

/** One line per error, naming the key, the value and what is expected. */
export function formatLoadError(error: LoadError): string {
  switch (error.kind) {
    case 'unreadable-file':
      return `Cannot read config file ${error.path}: ${error.reason}`;
    case 'malformed-option':
      return `Invalid option -o ${JSON.stringify(error.text)}: expected key=value`;
    case 'bad-value':
      return `${formatConfigError(error.error)}${describeOrigin(error.origin)}`;
  }
}
