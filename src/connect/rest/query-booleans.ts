/**
 * Boolean query parameters read as Kafka Connect reads them. Its resources declare them
 * `@QueryParam("includeTasks") Boolean` (forward, onlyFailed, connectorsOnly, ...),
 * which JAX-RS fills through `Boolean.valueOf(String)`: any case of `true` is true and
 * every other value (`1`, `yes`, the empty string) is false. Nothing is refused.
 *
 * JSON-schema coercion alone would refuse `TRUE` with a 400 and read `1` as true, so
 * each route's boolean query properties are rewritten to `"true"` / `"false"` before
 * validation; the schema then only has to coerce those two strings. Installed as an
 * onRoute hook before any route is registered, so every resource gets it without
 * parsing booleans itself. A repeated parameter takes its first value, as JAX-RS does
 * for a single-valued parameter. A blank value of a parameter with a default (in the
 * schema; `@DefaultValue` on a primitive `boolean` in Connect, as connectorsOnly) is
 * the default, as Jersey's PrimitiveValueOfExtractor reads it: `?connectorsOnly=`
 * still lists connectors only.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

/** JAX-RS's `Boolean.valueOf`: true for any case of "true", false for everything else. */
export function parseQueryBoolean(value: unknown): boolean {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.toLowerCase() === 'true';
}

/** The properties a route's querystring schema types as boolean, and whether each has a default. */
function booleanQueryKeys(route: RouteOptions): Array<{ name: string; hasDefault: boolean }> {
  const querystring = route.schema?.querystring as
    | { properties?: Record<string, { type?: unknown; default?: unknown }> }
    | undefined;
  const properties = querystring?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'boolean')
    .map(([name, property]) => ({ name, hasDefault: property.default !== undefined }));
}

function isBlank(value: unknown): boolean {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first !== 'string' || first.trim() === '';
}

/** Make every route registered after this call read its boolean query parameters like JAX-RS. */
export function installQueryBooleans(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const keys = booleanQueryKeys(route);
    if (keys.length === 0) return;
    const normalize = async (request: { query: unknown }) => {
      const query = request.query as Record<string, unknown>;
      for (const { name, hasDefault } of keys) {
        if (!(name in query)) continue;
        // Removed, the schema's default applies.
        if (hasDefault && isBlank(query[name])) delete query[name];
        else query[name] = String(parseQueryBoolean(query[name]));
      }
    };
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined
        ? normalize
        : [normalize, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
