import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { havePostgres, testDatabase } from './support/postgres';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

type Ev = { type: string; [k: string]: any };

/**
 * Issue 47: two hosts (a DATA_DIR each) on one PostgreSQL. A file uploaded through one is read back through the other
 * and read by a turn that runs on the other: its bytes are in PostgreSQL, not in the uploading host's data dir.
 */
const suite = havePostgres('artifacts across hosts') ? describe : describe.skip;

suite('session artifacts across two hosts', () => {
  let upstream: ScriptedOpenAIServer;
  let a: TestApp;
  let b: TestApp;
  const notes = Buffer.from('line one\nthe code word is heliotrope\nline three\n');

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    const env = { POSTGRES_URL: (await testDatabase('artifacts_hosts'))!, OAUTH_SIGNING_KEY: randomBytes(32).toString('base64'), SECRETS_KEY: randomBytes(32).toString('hex'), LAMBDA_SNAPSHOT_AT_START: 'false' };
    a = await startTestApp({ env });
    b = await startTestApp({ env });
    await registerScripted(a, upstream, 'm');
    const created = await a.call('POST', '/v2/agents', { key: 'clerk', name: 'clerk', model: { name: 'm' }, tool_configurations: { read: { type: 'artifact_read', tool_configuration: { max_lines: 10 } } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(created.status).toBe(201);
    expect((await a.call('POST', '/v2/agents/clerk/sessions', { key: 's' })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
  });

  it('a file uploaded through one host is read back through the other, and by a turn on the other', async () => {
    const form = new FormData();
    form.append('files', new Blob([notes], { type: 'text/plain' }), 'notes.txt');
    const uploaded = await fetch(`${a.url}/v2/agents/clerk/sessions/s/events`, { method: 'POST', headers: { 'x-api-key': a.key }, body: form });
    expect(uploaded.status).toBe(201);
    const artifactId: string = ((await uploaded.json()) as { events: Ev[] }).events[0].artifacts[0].artifact_id;

    // Host b answers from its own projections of the shared log: once they show the upload, it reads the bytes.
    const got = await until('host b to show the artifact', async () => {
      const res = await b.call('GET', `/v2/agents/clerk/sessions/s/artifacts/${artifactId}`);
      return res.status === 200 ? res : undefined;
    }, 20_000);
    expect(Buffer.from(got.body.data, 'base64').equals(notes)).toBe(true);

    upstream.enqueue({ toolCalls: [{ id: 'c0', name: 'read', arguments: JSON.stringify({ artifact_id: artifactId, start_line: 1 }) }] }, { content: 'done' });
    const turn = await b.call('POST', '/v2/agents/clerk/sessions/s/events', { messages: [{ type: 'text', content: 'read my notes' }] });
    expect(turn.status).toBe(201);
    const output = turn.body.events.find((e: Ev) => e.type === 'tool_output');
    expect(output).toMatchObject({ tool_output: { content: expect.stringContaining('the code word is heliotrope') } });

    // Not in the uploading host's data dir: in PostgreSQL.
    expect(existsSync(join(a.dataDir, 'artifacts'))).toBe(false);
    expect(existsSync(join(b.dataDir, 'artifacts'))).toBe(false);
  });
});
