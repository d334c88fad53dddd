import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scratchDir } from './support/scratch-dir';
import { entryArgs } from './support/service-build';

const run = promisify(execFile);

/**
 * The default encoder's word table is cached by the build (issue 44: a first start loaded it 7.6 s after "service
 * started", and an image whose node_modules the service cannot write parsed its 307 MB package at every start).
 */
describe('the default encoder cache built by npm run build', () => {
  it('is a step of the build script', () => {
    const build = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.build;
    expect(build.split('&&').map((s) => s.trim())).toContain('node dist/apps/cli/encoder-cache.js');
  });

  it('writes the binary table into ENCODER_CACHE_DIR, which a second run finds', async () => {
    const dir = scratchDir('ars-encoder-cache-');
    try {
      const first = await run(process.execPath, entryArgs('apps/cli/encoder-cache.ts'), { env: { ...process.env, ENCODER_CACHE_DIR: dir }, timeout: 120_000 });
      expect(first.stdout).toMatch(/word table ready in .* \(341479 words, \d+ ms\)/);
      expect(readdirSync(dir).sort()).toEqual(['glove-6b-100d.v2.q8', 'glove-6b-100d.v2.words']);
      const again = await run(process.execPath, entryArgs('apps/cli/encoder-cache.ts'), { env: { ...process.env, ENCODER_CACHE_DIR: dir }, timeout: 60_000 });
      expect(again.stdout).toMatch(/341479 words/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
