#!/usr/bin/env node
// The `connect` command. It runs the TypeScript sources through tsx's loader so that
// `npx connect ...` works right after `npm ci`, with no build step to remember, and so
// that plugins in plugin.path may be written in TypeScript or JavaScript alike.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
