import { loadWordTable, wordTableCacheDir } from '@lib/encoders';

/**
 * Part of `npm run build` (and the Docker image's build): the shipped default encoder's word table is parsed from
 * its 307 MB package once here and kept in its binary cache (ENCODER_CACHE_DIR), so a first start loads it in
 * ~0.3 s instead of parsing it after "service started" (~4.5 s quiet, 7.6 s seen: issue 44), and an image whose
 * node_modules the service cannot write does not parse it at every start. A table already cached is only read.
 */
async function main(): Promise<void> {
  const started = Date.now();
  const dir = wordTableCacheDir();
  const table = await loadWordTable(dir);
  process.stdout.write(`default encoder's word table ready in ${dir} (${table.words.length} words, ${Date.now() - started} ms)\n`);
}

main().catch((e: unknown) => {
  // The service still starts without the cache (it parses the package at first use): say so, do not fail the build.
  process.stderr.write(`the default encoder's cache was not built (${e instanceof Error ? e.message : String(e)}); the service will parse its table at first use\n`);
});
