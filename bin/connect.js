#!/usr/bin/env node
// The `connect` command. It runs the compiled build in dist/ when that build is newer
// than every source file (`npm ci` builds it, as does `npm run build`), and otherwise
// the TypeScript sources through tsx's loader, so an edited source takes effect with no
// build step to remember. The build is the lighter way to run: no loader thread
// compiling modules and no source maps held in memory (about 50 MB less per worker).
// CONNECT_FROM_SOURCE=1 runs the sources even when the build is fresh. Plugins in
// plugin.path may be TypeScript or JavaScript either way.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIsFresh } from './build-freshness.js';
import { applyWorkerV8Flags } from './v8-flags.js';

applyWorkerV8Flags();

const root = fileURLToPath(new URL('..', import.meta.url));
let cli;
if (
  process.env.CONNECT_FROM_SOURCE !== '1' &&
  buildIsFresh(root) &&
  existsSync(new URL('../dist/src/cli.js', import.meta.url))
) {
  cli = await import('../dist/src/cli.js');
} else {
  (await import('tsx/esm/api')).register();
  // A TypeScript plugin outside a "type": "module" package loads as CommonJS.
  (await import('tsx/cjs/api')).register();
  cli = await import('../src/cli.ts');
}
process.exitCode = await cli.main(process.argv.slice(2));
