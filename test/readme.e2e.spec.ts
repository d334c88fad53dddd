import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@lib/platform';
import { ScriptedOpenAIServer } from '@lib/testing';
import { BOOTSTRAP_KEY_FILE } from '../apps/api/src/bootstrap-key';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);

/** A README example block, between its markers (`readme-test` or `readme-model-test`). */
function readmeScript(marker = 'readme-test'): string {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const block = readme.split(`<!-- ${marker}:start -->`)[1]?.split(`<!-- ${marker}:end -->`)[0];
  const script = block?.match(/```sh\n([\s\S]*?)```/)?.[1];
  if (!script) throw new Error('README has no readme-test block');
  return script;
}

describe('README examples', () => {
  let app: TestApp;
  let model: ScriptedOpenAIServer;
  beforeAll(async () => {
    app = await startTestApp();
    model = await ScriptedOpenAIServer.start();
  });
  afterAll(async () => {
    await app.close();
    await model.close();
  });

  it('start with the two set-up commands', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const firstBlock = readme.match(/```sh\n([\s\S]*?)```/)?.[1] ?? '';
    expect(firstBlock).toMatch(/^npm ci && npm start/m);
    expect(firstBlock).toMatch(/^npm test/m);
  });

  it('say after them how to pick the port, the address and the data directory, and where the key then is', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const afterSetUp = readme.split('```').slice(2).join('```').trimStart().split('\n')[0];
    const command = afterSetUp.match(/`((?:[A-Z_]+=\S+ )+)npm start`/)?.[1] ?? '';
    const env = Object.fromEntries(command.trim().split(' ').map((a) => a.split('=') as [string, string]));
    expect(Object.keys(env).sort()).toEqual(['DATA_DIR', 'HOST', 'PORT']);
    // The names are the service's own: the settings it reads from them are the ones the line shows.
    const config = loadConfig(env);
    expect([String(config.port), config.host, config.dataDir]).toEqual([env.PORT, env.HOST, env.DATA_DIR]);
    expect(afterSetUp).toContain(`\`${join(env.DATA_DIR, BOOTSTRAP_KEY_FILE)}\``);
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
    // The corpus's events and its documents' (issue 44: the example showed only CorpusCreated).
    const log = outputs.find((o) => o.events)?.events.map((e: { type: string }) => e.type);
    expect(log[0]).toBe('CorpusCreated');
    expect(log).toEqual(expect.arrayContaining(['DocumentIndexed']));
    expect((await app.call('GET', '/v2/corpora/my-docs/documents/fox')).status).toBe(404);
  });

  it('run the model and agent block against a scripted model: the agent searches the corpus and answers', async () => {
    model.enqueue({ content: 'Hello!' }, { content: 'The corpus is about tides [1].' }, { toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"query":"what causes tides"}' }] }, { content: 'The moon, Ada.' });
    const script = `curl() { command curl "$@"; echo; }\n${readmeScript('readme-model-test')}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, BASE: app.url, KEY: app.key, LLM_URI: `${model.baseURL}/chat/completions` },
      cwd: app.dataDir,
    });
    const outputs = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const turn = outputs.find((o) => o.session_key === 'chat-1' && o.events);
    expect(turn.events.map((e: { type: string }) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(turn.events[2].tool_output.search_results[0].document_id).toBe('tides');
    expect(turn.events[3].content).toBe('The moon, Ada.');
    expect(outputs.at(-1).events).toHaveLength(4);
    expect((model.chatRequests().at(-2)!.body as { messages: { content: string }[] }).messages[0].content).toBe('Answer Ada from the documents; search them first.');
  });
});
