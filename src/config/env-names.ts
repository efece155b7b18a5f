/**
 * Environment variable names for config keys, in the convention of Confluent's
 * Docker images, so compose files and Kubernetes manifests written for
 * `confluentinc/cp-kafka-connect` carry over:
 *
 *   CONNECT_BOOTSTRAP_SERVERS          -> bootstrap.servers
 *   CONNECT_REST_PORT                  -> rest.port
 *   CONNECT_CONFIG_PROVIDERS_FILE_CLASS -> config.providers.file.class
 *   CONNECT_SASL_JAAS__CONFIG          -> sasl.jaas_config   (double underscore = '_')
 *   CONNECT_FOO___BAR                  -> foo-bar            (triple underscore = '-')
 *
 * The prefix is CONNECT_ for the worker commands and BROKER_ for `connect broker`
 * (so BROKER_BROKER_PORT -> broker.port, BROKER_LOG_RETENTION_MS -> log.retention.ms).
 */

/**
 * Variables with the prefix that configure the image or the JVM, not a key (as in
 * Confluent's images), and CONNECT_FROM_SOURCE, which tells bin/connect.js to run the
 * TypeScript sources (README's quick start) and was reported as an unknown key.
 */
const NOT_KEYS = [/^LOG4J_/, /^JMX_/, /^OPTS$/, /^HEAP_OPTS$/, /^JVM_/, /^FROM_SOURCE$/];

/** Map one variable name (prefix already removed) to its config key. */
export function envNameToKey(suffix: string): string {
  // Split on runs of underscores: one means '.', two '_', three '-'.
  return suffix.toLowerCase().replace(/_+/g, (run) => {
    if (run.length === 1) return '.';
    if (run.length === 2) return '_';
    if (run.length === 3) return '-';
    // Longer runs have no meaning in the convention; keep them readable as given.
    return run;
  });
}

/** The variable name that sets `key` under `prefix` (e.g. 'CONNECT_'). */
export function keyToEnvName(prefix: string, key: string): string {
  const body = key
    .split('')
    .map((c) => (c === '.' ? '_' : c === '_' ? '__' : c === '-' ? '___' : c.toUpperCase()))
    .join('');
  return `${prefix}${body}`;
}

export interface EnvOverride {
  key: string;
  value: string;
  variable: string;
}

/** Every config key set through variables with `prefix`, in variable-name order. */
export function envOverrides(
  env: Readonly<Record<string, string | undefined>>,
  prefix: string,
): EnvOverride[] {
  const out: EnvOverride[] = [];
  for (const variable of Object.keys(env).sort()) {
    const value = env[variable];
    if (value === undefined || !variable.startsWith(prefix)) continue;
    const suffix = variable.slice(prefix.length);
    if (suffix === '' || NOT_KEYS.some((re) => re.test(suffix))) continue;
    out.push({ key: envNameToKey(suffix), value, variable });
  }
  return out;
}
