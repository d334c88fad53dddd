import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runInThisContext } from 'node:vm';
import SwaggerParser from '@apidevtools/swagger-parser';
import * as ts from 'typescript';
import * as documentModule from '../apps/api/src/openapi/document';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 44: GET /v2/openapi.json serves the service's own OpenAPI document (docs/openapi.md): public, valid OpenAPI,
 * built on the first request and then served as built; and a client generated from it (openapi-typescript types,
 * openapi-fetch calls), type-checked against those types, creates a corpus, indexes and queries a document and
 * lists agents on the started app.
 */
describe('GET /v2/openapi.json', () => {
  let app: TestApp;
  const build = jest.spyOn(documentModule, 'buildOpenApiDocument');
  const scratch = mkdtempSync(join(tmpdir(), 'ars-openapi-client-'));

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('is built on the first request, not at start-up, and then served as built', async () => {
    expect(build).not.toHaveBeenCalled();
    const first = await fetch(`${app.url}/v2/openapi.json`);
    const second = await fetch(`${app.url}/v2/openapi.json`);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await second.json()).toEqual(await first.json());
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('is valid OpenAPI 3 and describes the service’s own routes, bodies and errors', async () => {
    const doc = (await app.call('GET', '/v2/openapi.json')).body;
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
    expect(doc.openapi).toMatch(/^3\./);
    // The service's own operations (not in the reference) are there, under our names; the console's pages are not.
    expect(doc.paths['/v2/webhooks'].post.operationId).toBe('webhooksCreate');
    expect(doc.paths['/v2/openapi.json'].get.security).toEqual([]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/console'))).toBe(false);
    // A body is the DTO's schema: required fields, limits and enums as class-validator checks them.
    const createCorpus = doc.paths['/v2/corpora'].post;
    expect(createCorpus.operationId).toBe('createCorpus');
    expect(createCorpus.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateCorpusDto' });
    expect(doc.components.schemas.CreateCorpusDto).toMatchObject({ required: ['key', 'name'], additionalProperties: false });
    expect(Object.keys(createCorpus.responses)).toEqual(['201', '202', '400', '401', '403']);
    expect(createCorpus.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas.Error.required).toEqual(['messages', 'request_id']);
  });

  it('is served to anyone, with or without a credential, and holds no data of the deployment', async () => {
    await app.call('POST', '/v2/corpora', { key: 'private-corpus-7f3a', name: 'Private corpus 7f3a' });
    const anonymous = await app.call('GET', '/v2/openapi.json', undefined, { 'x-api-key': '' });
    const withKey = await app.call('GET', '/v2/openapi.json');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual(withKey.body);
    const text = JSON.stringify(anonymous.body);
    expect(text).not.toContain('private-corpus-7f3a');
    expect(text).not.toContain(app.key);
  });

  it('generates a client that type-checks against it and calls the service', async () => {
    // The generator's own command line, on the document as the service serves it (openapi-typescript is ESM-only
    // inside: a process of its own rather than an import into jest's CommonJS runtime).
    await generate(`${app.url}/v2/openapi.json`, join(scratch, 'schema.d.ts'));
    writeFileSync(join(scratch, 'client.ts'), CLIENT);
    expect(await typeErrors(scratch, 'client.ts')).toEqual([]);
    // The types bind: a path parameter the document does not name is a compile error.
    writeFileSync(join(scratch, 'wrong.ts'), WRONG_CLIENT);
    expect((await typeErrors(scratch, 'wrong.ts')).join('\n')).toMatch(/corpus_id/);

    const run = compiled(join(scratch, 'client.ts')) as (url: string, key: string) => Promise<Record<string, { status: number; data: any }>>;
    const results = await run(app.url, app.key);
    expect(results.created.status).toBe(201);
    expect(results.created.data).toMatchObject({ key: 'generated', name: 'Generated client' });
    expect(results.indexed.status).toBe(201);
    expect(results.queried.status).toBe(200);
    expect(results.queried.data.search_results[0]).toMatchObject({ document_id: 'bridges' });
    expect(results.queried.data.search_results[0].text).toContain('suspension bridge');
    expect(results.agent.status).toBe(201);
    expect(results.agents.status).toBe(200);
    expect(results.agents.data.agents.map((a: { key: string }) => a.key)).toContain('generated-agent');
    expect(results.missing.status).toBe(404);
    expect(results.missing.data.messages[0]).toEqual(expect.any(String));
  });
});

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export async function run(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': key } });
  const corpus = { params: { path: { corpus_key: 'generated' } } };
  const created = await client.POST('/v2/corpora', { body: { key: 'generated', name: 'Generated client' } });
  const indexed = await client.POST('/v2/corpora/{corpus_key}/documents', {
    ...corpus,
    body: { id: 'bridges', type: 'core', document_parts: [{ text: 'The Golden Gate is a suspension bridge over the strait.' }] },
  });
  const queried = await client.POST('/v2/corpora/{corpus_key}/query', { ...corpus, body: { query: 'Which suspension bridge spans the strait?', search: { limit: 3 } } });
  await client.POST('/v2/llms', { body: { name: 'generated-llm', model: 'm', uri: 'http://127.0.0.1:9/v1/chat/completions' } });
  const agent = await client.POST('/v2/agents', { body: { key: 'generated-agent', name: 'Generated agent', model: { name: 'generated-llm' }, first_step_name: 'main', steps: { main: { instructions: [] } } } });
  const agents = await client.GET('/v2/agents', { params: { query: { limit: '50' } } });
  const missing = await client.GET('/v2/corpora/{corpus_key}', { params: { path: { corpus_key: 'no-such-corpus' } } });
  const out = (r: { response: Response; data?: unknown; error?: unknown }) => ({ status: r.response.status, data: r.data ?? r.error });
  return { created: out(created), indexed: out(indexed), queried: out(queried), agent: out(agent), agents: out(agents), missing: out(missing) };
}
`;

const WRONG_CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';
export const wrong = () => createClient<paths>({ baseUrl: 'http://127.0.0.1' }).GET('/v2/corpora/{corpus_key}', { params: { path: { corpus_id: 'x' } } });
`;

/** Runs openapi-typescript's CLI on a document URL, writing the types file. */
async function generate(url: string, out: string): Promise<void> {
  const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
  await promisify(execFile)(process.execPath, [cli, url, '--output', out], { timeout: 60_000 });
}

/**
 * The type errors of a file of the scratch folder, compiled strictly against the generated types and openapi-fetch.
 * tsc runs in a process of its own: checking takes seconds, and blocking this process's loop that long lets the
 * app's idle keep-alive sockets close under the next request (ECONNRESET).
 */
async function typeErrors(dir: string, file: string): Promise<string[]> {
  const compilerOptions = {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'commonjs',
    moduleResolution: 'node10',
    lib: ['ES2023', 'DOM'],
    types: [],
    skipLibCheck: true,
    esModuleInterop: true,
    baseUrl: dir,
    paths: { 'openapi-fetch': [dirname(require.resolve('openapi-fetch/package.json'))] },
  };
  const config = join(dir, `tsconfig.${file}.json`);
  writeFileSync(config, JSON.stringify({ compilerOptions, files: [join(dir, file)] }));
  const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const output = await promisify(execFile)(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { timeout: 120_000 }).then(
    (r) => r.stdout,
    (e: { stdout?: string; message: string }) => e.stdout || e.message,
  );
  return output.split('\n').filter((l) => l.includes('error TS'));
}

/** The client file as CommonJS, run in this process (its one runtime import, openapi-fetch, resolved from here). */
function compiled(file: string): unknown {
  const js = ts.transpileModule(require('node:fs').readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText;
  const module = { exports: {} as Record<string, unknown> };
  (runInThisContext(`(function (require, module, exports) {${js}\n})`) as (r: NodeRequire, m: typeof module, e: unknown) => void)(require, module, module.exports);
  return module.exports.run;
}
