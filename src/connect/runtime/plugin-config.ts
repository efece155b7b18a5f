/**
 * Sub-configs handed to plugins: the keys under a prefix with the prefix stripped
 * (`transforms.route.regex` -> `regex` for the transform aliased `route`), as Kafka's
 * `originalsWithPrefix` gives them.
 */
export function withPrefix(
  config: Readonly<Record<string, unknown>>,
  prefix: string,
  exclude: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (!key.startsWith(prefix)) continue;
    const sub = key.slice(prefix.length);
    if (sub === '' || exclude.includes(sub)) continue;
    out[sub] = value;
  }
  return out;
}

/** A comma-separated list value (string or already a list), trimmed, empties dropped. */
export function listValue(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).filter((s) => s !== '');
  if (typeof value !== 'string') return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
