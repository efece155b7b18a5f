/**
 * Config definitions, declared once and reused for parsing, validation, `--help`,
 * REST `/config/validate` answers and the README's reference tables.
 *
 * Values arrive as strings (properties files, env vars, `-o key=value`) or as JSON
 * values (REST bodies, where Kafka Connect also sends everything as strings). Each
 * definition turns its raw value into a typed value or a ConfigError that names the
 * key, the value and what was expected: callers never see a half-parsed config.
 *
 * This module is shared by every layer (worker, broker, connector plugins through
 * src/connect/api) and so depends on nothing but the standard library.
 */

export type ConfigType =
  | 'string'
  | 'password'
  | 'int'
  | 'long'
  | 'double'
  | 'boolean'
  | 'list'
  | 'class';

export type Importance = 'high' | 'medium' | 'low';

/** A validator returns an error text ("must be at least 1") or undefined when valid. */
export type Validator<T> = (value: T, key: string) => string | undefined;

export interface ConfigDef<T = unknown> {
  name: string;
  type: ConfigType;
  /** Undefined means required: a missing value is an error. Null means optional, no value. */
  default?: T | null;
  validator?: Validator<T>;
  importance?: Importance;
  /** One line: what the key does, in the words a user would search for. */
  doc: string;
  group?: string;
  /** Shown in docs in place of the computed default, e.g. "the number of cores". */
  defaultDoc?: string;
}

export interface ConfigError {
  key: string;
  value: unknown;
  message: string;
}

export interface ParsedConfig {
  /** Typed values for every defined key (defaults filled in) plus undefined keys as given. */
  values: Record<string, unknown>;
  errors: ConfigError[];
  /** Keys that no definition knows; callers decide whether that is a warning. */
  unknown: string[];
}

/**
 * A definition of any value type, for lists of mixed definitions. `any` is needed
 * because validators take their value type as a parameter (contravariant).
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type AnyConfigDef = ConfigDef<any>;

/** Declare a definition with its value type inferred from the default or validator. */
export function define<T>(def: ConfigDef<T>): ConfigDef<T> {
  return def;
}

export class ConfigException extends Error {
  readonly errors: ConfigError[];
  constructor(errors: ConfigError[]) {
    super(errors.map(formatConfigError).join('\n'));
    this.name = 'ConfigException';
    this.errors = errors;
  }
}

export function formatConfigError(e: ConfigError): string {
  const shown =
    e.value === undefined ? '' : ` (value ${JSON.stringify(redactIfSecret(e.key, e.value))})`;
  return `Invalid value for configuration '${e.key}'${shown}: ${e.message}`;
}

function redactIfSecret(key: string, value: unknown): unknown {
  return /password|secret|credentials/i.test(key) ? '[hidden]' : value;
}

/** Parse one raw value for a definition. Returns the typed value or an error text. */
export function parseValue(def: ConfigDef, raw: unknown): { value?: unknown; error?: string } {
  if (raw === null || raw === undefined) return { value: null };
  const text = typeof raw === 'string' ? raw.trim() : raw;
  switch (def.type) {
    case 'string':
    case 'password':
    case 'class':
      if (typeof text === 'string') return { value: text };
      if (typeof text === 'number' || typeof text === 'boolean') return { value: String(text) };
      return { error: `expected a string` };
    case 'int':
    case 'long': {
      let n =
        typeof text === 'number'
          ? text
          : typeof text === 'string' && /^[-+]?\d+$/.test(text)
            ? Number(text)
            : Number.NaN;
      // Long settings are counts and durations whose maximum (Java's Long.MAX_VALUE,
      // as in flush.messages) means "never"; 2^53-1 means the same here.
      if (def.type === 'long' && Number.isInteger(n) && Math.abs(n) > Number.MAX_SAFE_INTEGER) {
        n = Math.sign(n) * Number.MAX_SAFE_INTEGER;
      }
      if (!Number.isSafeInteger(n)) return { error: `expected a whole number` };
      if (def.type === 'int' && (n < -2147483648 || n > 2147483647)) {
        return { error: 'expected a 32-bit whole number' };
      }
      return { value: n };
    }
    case 'double': {
      const n =
        typeof text === 'number'
          ? text
          : typeof text === 'string' && text !== ''
            ? Number(text)
            : Number.NaN;
      if (!Number.isFinite(n)) return { error: 'expected a number' };
      return { value: n };
    }
    case 'boolean':
      if (typeof text === 'boolean') return { value: text };
      if (typeof text === 'string' && /^(true|false)$/i.test(text))
        return { value: text.toLowerCase() === 'true' };
      return { error: 'expected true or false' };
    case 'list':
      if (Array.isArray(text))
        return { value: text.map((v) => String(v).trim()).filter((v) => v !== '') };
      if (typeof text === 'string')
        return {
          value:
            text === ''
              ? []
              : text
                  .split(',')
                  .map((v) => v.trim())
                  .filter((v) => v !== ''),
        };
      return { error: 'expected a comma-separated list' };
  }
}

/**
 * Parse a raw key/value map against definitions. Every defined key gets a value
 * (its default when absent); required keys without a value and bad values become
 * errors; keys with no definition pass through untouched and are listed as unknown.
 */
export function parseConfig(
  defs: readonly AnyConfigDef[],
  raw: Record<string, unknown>,
): ParsedConfig {
  const values: Record<string, unknown> = {};
  const errors: ConfigError[] = [];
  const known = new Set<string>();
  for (const def of defs) {
    known.add(def.name);
    const given = Object.hasOwn(raw, def.name) ? raw[def.name] : undefined;
    if (
      given === undefined ||
      given === null ||
      (typeof given === 'string' &&
        given.trim() === '' &&
        def.type !== 'string' &&
        def.type !== 'list')
    ) {
      if (def.default === undefined) {
        errors.push({
          key: def.name,
          value: given ?? undefined,
          message: `Missing required configuration "${def.name}" which has no default value.`,
        });
        continue;
      }
      values[def.name] = def.default;
      continue;
    }
    const parsed = parseValue(def, given);
    if (parsed.error !== undefined) {
      errors.push({ key: def.name, value: given, message: parsed.error });
      continue;
    }
    const problem = parsed.value === null ? undefined : def.validator?.(parsed.value, def.name);
    if (problem !== undefined) {
      errors.push({ key: def.name, value: given, message: problem });
      continue;
    }
    values[def.name] = parsed.value;
  }
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (known.has(key)) continue;
    unknown.push(key);
    values[key] = value;
  }
  return { values, errors, unknown };
}

/** Parse and throw one ConfigException listing every error. */
export function parseConfigOrThrow(
  defs: readonly AnyConfigDef[],
  raw: Record<string, unknown>,
): ParsedConfig {
  const parsed = parseConfig(defs, raw);
  if (parsed.errors.length > 0) throw new ConfigException(parsed.errors);
  return parsed;
}

// ---- common validators -------------------------------------------------------------

export const atLeast =
  (min: number): Validator<number> =>
  (v) =>
    v < min ? `must be at least ${min}` : undefined;

export const between =
  (min: number, max: number): Validator<number> =>
  (v) =>
    v < min || v > max ? `must be between ${min} and ${max}` : undefined;

export const oneOf =
  (...allowed: string[]): Validator<string> =>
  (v) =>
    allowed.includes(v) ? undefined : `must be one of ${allowed.join(', ')}`;

/** Like oneOf, for lists: every element must be allowed. */
export const eachOneOf =
  (...allowed: string[]): Validator<string[]> =>
  (v) => {
    const bad = v.filter((x) => !allowed.includes(x));
    return bad.length === 0
      ? undefined
      : `contains ${bad.join(', ')}; allowed values are ${allowed.join(', ')}`;
  };

export const nonEmpty: Validator<string> = (v) =>
  v.length === 0 ? 'must not be empty' : undefined;
