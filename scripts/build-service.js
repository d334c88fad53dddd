#!/usr/bin/env node
// The service's build, one list of steps for `npm run build` and the tests' compiled copy (test/support/service-build.ts):
// tsc, tsc-alias for the @lib/* paths, and the lambda sandbox's runtime files (plain .mjs/.py, not compiled).
// Usage: node scripts/build-service.js [--outDir DIR] [--noCheck]
const { execFileSync } = require('node:child_process');
const { cpSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const args = process.argv.slice(2);
const at = args.indexOf('--outDir');
const outDir = at >= 0 ? args[at + 1] : join(root, 'dist');
if (!outDir) throw new Error('--outDir needs a directory');
const out = at >= 0 ? ['--outDir', outDir] : [];
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (name, extra) => execFileSync(bin(name), ['-p', 'tsconfig.build.json', ...extra], { cwd: root, stdio: 'inherit' });
// Incremental: the build info sits with the output, so a build with nothing changed re-checks nothing (`npm start` builds
// before every start: 11 s each time before, issue 44). A removed output directory takes its build info with it.
run('tsc', [...(args.includes('--noCheck') ? ['--noCheck'] : []), ...out, '--incremental', '--tsBuildInfoFile', join(outDir, '.tsbuildinfo')]);
run('tsc-alias', out);
const runtime = 'libs/tools/src/adapters/lambda/runtime';
cpSync(join(root, runtime), join(outDir, runtime), { recursive: true });
