import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);

/** The README's example block, between its readme-test markers. */
function readmeScript(): string {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const block = readme.split('<!-- readme-test:start -->')[1]?.split('<!-- readme-test:end -->')[0];
  const script = block?.match(/```sh\n([\s\S]*?)```/)?.[1];
  if (!script) throw new Error('README has no readme-test block');
  return script;
}

describe('README examples', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app.close());

  it('start with the two set-up commands', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const firstBlock = readme.match(/```sh\n([\s\S]*?)```/)?.[1] ?? '';
    expect(firstBlock).toMatch(/^npm ci && npm start/m);
    expect(firstBlock).toMatch(/^npm test/m);
  });

  it('run against the service: every curl succeeds and the query finds the document', async () => {
    // One JSON document per line: curl itself prints no trailing newline.
    const script = `curl() { command curl "$@"; echo; }\n${readmeScript()}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, BASE: app.url, KEY: app.key },
      cwd: app.dataDir,
    });
    const outputs = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const query = outputs.find((o) => o.search_results);
    expect(query.search_results[0]).toMatchObject({ document_id: 'tides', text: 'Tides are caused by the gravitational pull of the moon.' });
    expect(outputs).toContain(403);
    expect(outputs.find((o) => o.id === 'moon.md')?.parts.map((p: { text: string }) => p.text)).toEqual(['The moon pulls the oceans.', 'A full moon brings spring tides.']);
    // "tides" also mentions the moon but has no year: only the uploaded 2023 file passes the filter.
    const filtered = outputs.filter((o) => o.search_results)[1];
    expect(new Set(filtered.search_results.map((r: { document_id: string }) => r.document_id))).toEqual(new Set(['moon.md']));
    expect(outputs.find((o) => o.type === 'success')).toMatchObject({ updated_count: 2, skipped_count: 0, failed_count: 0 });
    expect(outputs.find((o) => o.events)?.events[0].type).toBe('CorpusCreated');
    expect((await app.call('GET', '/v2/corpora/my-docs/documents/fox')).status).toBe(404);
  });
});
