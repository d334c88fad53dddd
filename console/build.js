// Bundles the console (console/src, Preact + TypeScript) into static files the service serves at /console.
// Run by `npm run build`; the browser test calls buildConsole() itself, so `npm test` needs no build first.
'use strict';
const { cpSync, mkdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const esbuild = require('esbuild');

/** Writes index.html and assets/console.{js,css} into `outdir`, replacing what was there. */
async function buildConsole(outdir = join(__dirname, '..', 'dist', 'console')) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(join(outdir, 'assets'), { recursive: true });
  await esbuild.build({
    entryPoints: { console: join(__dirname, 'src', 'main.tsx') },
    outdir: join(outdir, 'assets'),
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'iife',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  });
  cpSync(join(__dirname, 'index.html'), join(outdir, 'index.html'));
  return outdir;
}

module.exports = { buildConsole };

if (require.main === module) {
  buildConsole(process.argv[2]).then(
    (dir) => process.stdout.write(`console built in ${dir}\n`),
    (e) => {
      process.stderr.write(`${e && e.message ? e.message : e}\n`);
      process.exit(1);
    },
  );
}
