// `npm run build` (and npm's `prepare`, so `npm ci` runs it): bundles the status page
// (ui/src -> ui/dist, ui/build-ui.mjs), then compiles src/ and connectors/ into dist/
// and stamps the build. bin/connect.js runs dist/ while the stamp is newer than every
// source file, and the TypeScript sources through tsx otherwise. Without TypeScript
// (an install that omits dev dependencies) only the page is bundled, with esbuild (a
// dependency), and the sources run through tsx; with it, the page's sources are
// type-checked too (ui/tsconfig.json: browser code, apart from the Node program).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const uiBuild = join(root, 'ui/build-ui.mjs');
// A tree without ui/ (a Docker stage that installs dependencies first) has no page.
if (existsSync(uiBuild)) {
  const { buildUiDist } = await import(pathToFileURL(uiBuild).href);
  const files = await buildUiDist();
  console.log(`build: status page bundled into ui/dist (${files.join(', ')})`);
} else {
  console.log('build: ui/ is not in this tree; the status page is not bundled');
}
let tsc;
try {
  const pkg = createRequire(import.meta.url).resolve('typescript/package.json');
  tsc = join(dirname(pkg), 'bin/tsc');
} catch {
  console.log('build: typescript is not installed; `connect` will run the sources through tsx');
  process.exit(0);
}
const dist = `${root}dist`;
// A build over an old dist/ would keep modules whose sources were deleted.
if (existsSync(dist)) rmSync(dist, { recursive: true, force: true });
if (existsSync(uiBuild)) {
  const check = spawnSync(process.execPath, [tsc, '--noEmit', '-p', 'ui'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (check.status !== 0) process.exit(check.status ?? 1);
}
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (run.status !== 0) process.exit(run.status ?? 1);
writeFileSync(`${dist}/.build-stamp`, `${new Date().toISOString()}\n`);
