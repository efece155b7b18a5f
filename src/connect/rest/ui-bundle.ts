/**
 * The status page's static files (index.html, app.js, app.css), as GET /ui serves them.
 *
 * Where they come from, decided once per process on the first request for the page:
 *   - ui/dist, written by `npm run build` (and npm's `prepare`, so `npm ci` writes it),
 *     when it is complete (its stamp is there) and no file of ui/src is newer;
 *   - else, when ui/src is there (a source checkout edited since the last build, or
 *     one whose build was skipped), an in-memory bundle made with esbuild, the same
 *     bundler and settings (ui/build-ui.mjs). So `npm start` always has a page that
 *     matches its sources, and the worker never writes into its install folder (which
 *     may be read-only in an image).
 * The first request rather than start-up: a worker nobody looks at pays nothing, and
 * bundling (a few hundred ms) never delays joining the group. A failed bundle is not
 * kept, so fixing the sources and reloading the page tries again; it is answered with
 * esbuild's message, never with a blank page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from '../../util/code-layout.ts';
import type { Logger } from '../../util/logger.ts';

/** ui/build-ui.mjs, loaded by path: dist/src/... has no ui/ folder beside it. */
type UiBuild = typeof import('../../../ui/build-ui.mjs');

export interface UiBundle {
  /** File name (`app.js`) to contents. */
  files: ReadonlyMap<string, Uint8Array>;
  /** `dist`: read from ui/dist; `memory`: bundled from ui/src by this process. */
  origin: 'dist' | 'memory';
}

/** The page's files, by file name, and why none could be had. */
export class UiBundleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UiBundleError';
  }
}

const bundles = new Map<string, Promise<UiBundle>>();

/** The bundle of the ui/ folder under `root` (the repository by default), made once. */
export function uiBundle(logger: Logger, root: string = repositoryRoot): Promise<UiBundle> {
  let pending = bundles.get(root);
  if (pending === undefined) {
    pending = loadBundle(logger, join(root, 'ui'));
    bundles.set(root, pending);
    pending.catch(() => bundles.delete(root));
  }
  return pending;
}

async function loadBundle(logger: Logger, uiDir: string): Promise<UiBundle> {
  const moduleFile = join(uiDir, 'build-ui.mjs');
  if (!existsSync(moduleFile))
    throw new UiBundleError(`the status page is not installed: ${moduleFile} is missing`);
  const build = (await import(pathToFileURL(moduleFile).href)) as UiBuild;
  const dist = build.uiDistDir;
  const stamp = join(dist, build.STAMP);
  const sourcesAt = build.newestSourceMtime();
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= sourcesAt) {
    const files = new Map<string, Uint8Array>();
    for (const name of readdirSync(dist)) {
      if (name !== build.STAMP) files.set(name, readFileSync(join(dist, name)));
    }
    return { files, origin: 'dist' };
  }
  if (sourcesAt === 0) {
    throw new UiBundleError(
      `the status page is not built (${stamp} is missing) and its sources (${build.uiSourceDir}) are absent: run npm run build`,
    );
  }
  logger.info(
    `bundling the status page from ${build.uiSourceDir} (ui/dist is missing or older than its sources; npm run build writes it)`,
  );
  try {
    return { files: await build.bundleUi(), origin: 'memory' };
  } catch (e) {
    throw new UiBundleError(`the status page does not build: ${(e as Error).message}`, {
      cause: e,
    });
  }
}
