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
  private readonly patterns: RegExp[] = [];

  add(url: string): void {
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
    this.patterns.push(new RegExp(`^${source}$`));
  }

  /** Whether some route serves this path (query string and trailing slash ignored). */
  has(url: string): boolean {
    let path = url.split('?')[0];
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return this.patterns.some((p) => p.test(path));
  }
}
