/**
 * Where this process's code runs from: the TypeScript sources (through tsx, or under
 * vitest) or their compiled twin in dist/, which bin/connect.js runs while it is fresh
 * (see scripts/build.mjs). The tree is the same in both: dist/src/... and
 * dist/connectors/... mirror src/ and connectors/ with .js for .ts.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when this module is the compiled build (dist/src/util/code-layout.js). */
export const runningCompiled = import.meta.url.endsWith('.js');

/** The repository root: package.json, src/, connectors/ and dist/ are in it. */
export const repositoryRoot = fileURLToPath(
  new URL(runningCompiled ? '../../../' : '../../', import.meta.url),
);

const distRoot = join(repositoryRoot, 'dist');

/**
 * The compiled twin of a source file or folder of the repository (connectors/x ->
 * dist/connectors/x), when running compiled and the twin exists; otherwise undefined.
 * A plugin folder under connectors/ then loads the same build as the runtime, rather
 * than a second, TypeScript copy of the runtime's API modules.
 */
export function compiledTwin(path: string): string | undefined {
  if (!runningCompiled) return undefined;
  const inRepo = relative(repositoryRoot, path);
  if (inRepo.startsWith('..') || inRepo === 'dist' || inRepo.startsWith(`dist${sep}`))
    return undefined;
  const twin = join(distRoot, inRepo.replace(/\.ts$/, '.js'));
  return existsSync(twin) ? twin : undefined;
}

let typescriptLoader: Promise<void> | undefined;

/**
 * Makes `import()` of TypeScript modules work in a compiled process (a plugin written
 * in TypeScript outside the build), by registering tsx's loader once. Under tsx or
 * vitest this does nothing: TypeScript already loads.
 */
export function loadTypeScript(): Promise<void> {
  if (!runningCompiled) return Promise.resolve();
  typescriptLoader ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(
    ([esm, cjs]) => {
      esm.register();
      // A .ts file outside a "type": "module" package loads as CommonJS.
      cjs.register();
    },
  );
  return typescriptLoader;
}
