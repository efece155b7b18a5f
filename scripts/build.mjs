// `npm run build` (and npm's `prepare`, so `npm ci` runs it): compiles src/ and
// connectors/ into dist/ and stamps the build. bin/connect.js runs dist/ while the
// stamp is newer than every source file, and the TypeScript sources through tsx
// otherwise. Without TypeScript (an install that omits dev dependencies) there is
// nothing to build: the command says so and the sources run through tsx.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
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
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (run.status !== 0) process.exit(run.status ?? 1);
writeFileSync(`${dist}/.build-stamp`, `${new Date().toISOString()}\n`);
