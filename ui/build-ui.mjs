// Bundles the status page (ui/src, Preact + TSX) with esbuild into static files:
// index.html, app.js and app.css. Plain JavaScript, not TypeScript, because two callers
// need it where no TypeScript loader runs: scripts/build.mjs (`npm run build`, npm's
// `prepare`, also when typescript is not installed) and the worker, which builds the
// bundle in memory when ui/dist is missing or older than ui/src (see
// src/connect/rest/ui-bundle.ts). Nothing is downloaded: esbuild and preact are
// dependencies, installed by `npm ci`.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const uiRoot = fileURLToPath(new URL('.', import.meta.url));
export const uiSourceDir = join(uiRoot, 'src');
export const uiDistDir = join(uiRoot, 'dist');
/** Written last by a build into ui/dist: a bundle without it is incomplete. */
export const STAMP = '.build-stamp';

/** The newest modification time (ms) of the files under ui/src, 0 when there are none. */
export function newestSourceMtime(dir = uiSourceDir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestSourceMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/**
 * Bundles ui/src into files: a map from file name (index.html, app.js, app.css) to
 * contents. Rejects with esbuild's messages when the sources do not compile.
 */
export async function bundleUi() {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: { app: join(uiSourceDir, 'main.tsx') },
    bundle: true,
    write: false,
    outdir: uiDistDir,
    format: 'esm',
    // Chromium, Firefox and Safari of the last few years; no polyfills are shipped.
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // The bundle is served as files only: no import may reach the network.
    platform: 'browser',
    logLevel: 'silent',
    legalComments: 'none',
  });
  const files = new Map();
  for (const out of result.outputFiles) {
    files.set(out.path.slice(uiDistDir.length + 1), out.contents);
  }
  files.set('index.html', readFileSync(join(uiSourceDir, 'index.html')));
  return files;
}

/** Bundles ui/src into ui/dist (replacing what was there) and stamps it. */
export async function buildUiDist() {
  const files = await bundleUi();
  rmSync(uiDistDir, { recursive: true, force: true });
  mkdirSync(uiDistDir, { recursive: true });
  for (const [name, contents] of files) writeFileSync(join(uiDistDir, name), contents);
  writeFileSync(join(uiDistDir, STAMP), `${new Date().toISOString()}\n`);
  return [...files.keys()];
}
