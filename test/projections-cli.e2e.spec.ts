import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { entryArgs } from './support/service-build';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const root = join(__dirname, '..');

/** `npm run projections -- …`, compiled from the sources (or run through ts-node), against the service's data dir while the service runs. */
async function cli(dataDir: string, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [...entryArgs('apps/cli/projections.ts'), ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout);
}

describe('projections CLI', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    await app.call('POST', '/v2/corpora', { key: 'cli', name: 'CLI' });
    await app.call('POST', '/v2/corpora/cli/documents', { id: 'd1', type: 'core', document_parts: [{ text: 'Rebuilt indexes answer the same queries.' }] });
  });
  afterAll(async () => app.close());

  it('lists projections with their lag, rebuilds one while the service runs, and the service follows the swap', async () => {
    const list = (await cli(app.dataDir, 'list')) as { projection: string; generation: number; behind: number }[];
    expect(list.map((p) => p.projection).sort()).toEqual(['agent_aliases', 'agent_connectors', 'agent_evaluations', 'agent_schedules', 'agent_sessions', 'agent_traces', 'agents', 'auth', 'chats', 'corpora', 'documents', 'encoders', 'generation_presets', 'glossaries', 'instructions', 'jobs', 'llms', 'metrics', 'pipeline_runs', 'pipelines', 'query_history', 'search', 'session_recall', 'tool_configurations', 'tool_servers', 'user_tools', 'webhooks']);
    const rebuilt = (await cli(app.dataDir, 'rebuild', 'search')) as { rebuilt: string; generation: number };
    expect(rebuilt).toMatchObject({ rebuilt: 'search', generation: 2 });
    const q = await app.call('GET', '/v2/corpora/cli/query?query=rebuilt');
    expect(q.body.search_results[0]?.document_id).toBe('d1');
    await app.call('POST', '/v2/corpora/cli/documents', { id: 'd2', type: 'core', document_parts: [{ text: 'Written after the swap.' }] });
    expect((await app.call('GET', '/v2/corpora/cli/query?query=swap')).body.search_results[0]?.document_id).toBe('d2');
    expect(await cli(app.dataDir, 'dead-letters')).toEqual([]);
  });

  it('explains its usage on a bad command', async () => {
    await expect(cli(app.dataDir, 'explode')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('usage: npm run projections') });
  });
});
