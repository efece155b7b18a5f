/**
 * The route patterns the REST app serves, so that the not-found handler can tell a
 * known path asked with the wrong method (405, as Jersey answers it) from a path that
 * does not exist (404). A 404 for `DELETE /connectors` would read as "connector gone"
 * to refresh logic such as Terraform's.
 *
 * Patterns are fastify's (`/connectors/:connector/tasks/:task/status`); a `:param`
 * matches one non-empty path segment and `*` the rest of the path. Filled by the
 * app's onRoute hook before it listens; read only from request handlers after that.
 */
export class KnownPaths {
  private readonly patterns: Array<{ re: RegExp; methods: Set<string> }> = [];

  add(url: string, methods: string | readonly string[] = []): void {
    const source = url
      .split('/')
      .map((segment) =>
        segment.startsWith(':')
          ? '[^/]+'
          : segment === '*'
            ? '.*'
            : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    const listed = typeof methods === 'string' ? [methods] : methods;
    const existing = this.patterns.find((p) => p.re.source === `^${source}$`);
    if (existing !== undefined) for (const m of listed) existing.methods.add(m);
    else this.patterns.push({ re: new RegExp(`^${source}$`), methods: new Set(listed) });
  }

  /** Whether some route serves this path (query string and trailing slash ignored). */
  has(url: string): boolean {
    const path = pathOf(url);
    return this.patterns.some((p) => p.re.test(path));
  }

  /** The methods served at this path, for an OPTIONS answer's Allow header (sorted). */
  methods(url: string): string[] {
    const path = pathOf(url);
    const all = new Set<string>();
    for (const p of this.patterns) if (p.re.test(path)) for (const m of p.methods) all.add(m);
    return [...all].sort();
  }
}

function pathOf(url: string): string {
  const path = url.split('?')[0];
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
