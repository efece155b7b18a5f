// Whether dist/ (scripts/build.mjs) was built after the last change to any file it is
// built from: package.json, the tsconfig files, and everything under src/ and
// connectors/ but tests. bin/connect.js runs the build only while this holds.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** @param {string} root the repository root */
export function buildIsFresh(root) {
  let built;
  try {
    built = statSync(join(root, 'dist/.build-stamp')).mtimeMs;
  } catch {
    return false;
  }
  const changed = (path) => {
    try {
      return statSync(path).mtimeMs > built;
    } catch {
      return false;
    }
  };
  const changedUnder = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'test' && entry.name !== 'node_modules' && changedUnder(path))
          return true;
      } else if (changed(path)) return true;
    }
    return false;
  };
  if (['package.json', 'tsconfig.json', 'tsconfig.build.json'].some((f) => changed(join(root, f))))
    return false;
  return !changedUnder(join(root, 'src')) && !changedUnder(join(root, 'connectors'));
}
