import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { fakeConsoleDir } from './support/console-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * A GET as a browser revalidates a cached page: `fetch` cannot be used, it adds `cache-control: no-cache` to any
 * request with If-None-Match (the Fetch standard), which asks for a fresh answer.
 */
function revalidate(url: string, etag: string): Promise<{ status: number; etag?: string; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'if-none-match': etag } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, etag: res.headers.etag, body }));
    }).on('error', reject);
  });
}

describe('ETags: the console revalidates its files; API answers carry none', () => {
  const consoleDir = fakeConsoleDir();
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', CONSOLE_DIR: consoleDir } });
  });
  afterAll(() => app?.close());

  it("answers 304 to a revalidation of an unchanged console page and 200 with a new ETag once it changes", async () => {
    const first = await fetch(`${app.url}/console/`);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await revalidate(`${app.url}/console/`, etag!);
    expect(again).toMatchObject({ status: 304, body: '' });

    writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>console, new build</title>');
    const rebuilt = await revalidate(`${app.url}/console/`, etag!);
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.body).toContain('new build');
    expect(rebuilt.etag).toMatch(/^"[\w-]+"$/);
    expect(rebuilt.etag).not.toBe(etag);
  });

  it('sends no ETag with JSON answers (Express would hash every body for one) so a revalidation gets the answer again', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'tags', name: 'Tags' })).status).toBe(201);
    const got = await app.call('GET', '/v2/corpora/tags');
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBeNull();
    const health = await revalidate(`${app.url}/health`, '"an-etag-seen-before"');
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(health.etag).toBeUndefined();
  });
});
