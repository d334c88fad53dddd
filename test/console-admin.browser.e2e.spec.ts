import type { Page } from 'playwright-core';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { createKey, createUser } from './support/auth-fixtures';
import { browserSuite, buildConsoleDir, consoleBrowser } from './support/console-browser';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 48, administration in the console: models (register with a masked credential, test through the API,
 * delete) and access (users, API keys and app clients, each secret shown once), and a credential that may not
 * administer sees one message instead of forms. Started through test/support/console-browser.ts: Debian's chromium
 * through playwright-core, no browser download; `CONSOLE_SCREENSHOTS=1` writes docs/console/models.png and access.png.
 */
const suite = browserSuite(__filename);

const MODEL_TOKEN = 'sk-console-model-secret-0123456789';

/** The model's side: the broken model's upstream fails, any other answers one line. */
function script(req: CapturedRequest): ScriptedReply {
  if ((req.body as { model?: string }).model === 'broken-upstream') return { error: { status: 500, message: 'the upstream is down' } };
  return { content: 'Hello from the scripted model.' };
}

suite('the console administration pages in a browser', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let page: Page;
  const web = consoleBrowser({ clipboard: true, openWaitsForHeading: true });
  const { shot, open, signIn, storage, defects, axeAt: axe } = web;

  beforeAll(async () => {
    const consoleDir = await buildConsoleDir('admin');
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = script;
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', CONSOLE_DIR: consoleDir } });
    expect((await app.call('POST', '/v2/corpora', { key: 'notes', name: 'Notes' })).status).toBe(201);
    ({ page } = await web.launch(app.url));
  }, 150_000);
  afterAll(async () => {
    await web.close();
    await app?.close();
    await upstream?.close();
  });

  it('registers a model with its credential masked, tests it through the API (an answer, then an error), and deletes one', async () => {
    await signIn(app.key);
    await open('#/models');
    await page.getByText('No language model is registered yet: register one above.').waitFor();
    const form = page.getByRole('form', { name: 'Register a model' });
    await form.getByLabel('Name', { exact: true }).fill('tester');
    await form.getByLabel('Upstream model', { exact: true }).fill('tester-upstream');
    // A host the outbound policy refuses: the API's message at the URI field, and the credential is asked for again.
    await form.getByLabel('Endpoint URI', { exact: true }).fill('http://10.0.0.1/v1/chat/completions');
    await form.getByLabel('Authentication', { exact: true }).selectOption('bearer');
    const token = form.getByLabel('Token', { exact: true });
    expect(await token.getAttribute('type')).toBe('password');
    await token.fill(MODEL_TOKEN);
    await token.press('Enter');
    await form.locator('.field.invalid', { has: page.getByLabel('Endpoint URI', { exact: true }) }).locator('.field-error').waitFor();
    expect(await form.getByRole('alert').count()).toBe(1);
    expect(await token.inputValue()).toBe('');
    await form.getByLabel('Endpoint URI', { exact: true }).fill(`${upstream.baseURL}/chat/completions`);
    await token.fill(MODEL_TOKEN);
    await token.press('Enter');
    await form.getByRole('status').getByText('Registered tester').waitFor();
    const row = page.getByRole('row', { name: /^tester / });
    await row.getByText('bearer (token ****)').waitFor();
    // Stored encrypted, shown masked everywhere, never kept by the page.
    expect((await app.call('GET', '/v2/llms/tester')).body.auth).toEqual({ type: 'bearer', token: '****' });
    expect(await token.inputValue()).toBe('');
    expect(await page.locator('body').textContent()).not.toContain(MODEL_TOKEN);
    expect(await storage()).not.toContain(MODEL_TOKEN);

    await row.getByRole('button', { name: 'Test tester' }).click();
    await row.getByRole('region', { name: 'Test of tester' }).getByText('Hello from the scripted model.').waitFor();
    const sent = upstream.chatRequests().at(-1)!;
    expect(sent.body?.model).toBe('tester-upstream');
    expect(sent.headers.authorization).toBe(`Bearer ${MODEL_TOKEN}`);
    await shot('models');

    // A model whose upstream fails: the test shows the API's error in the model's row.
    expect((await app.call('POST', '/v2/llms', { type: 'openai-compatible', name: 'broken', model: 'broken-upstream', uri: `${upstream.baseURL}/chat/completions` })).status).toBe(201);
    await page.reload();
    const broken = page.getByRole('row', { name: /^broken / });
    await broken.getByRole('button', { name: 'Test broken' }).click();
    await broken.getByRole('alert').waitFor();
    expect(await broken.getByRole('alert').textContent()).toMatch(/^5\d\d: /);
    await broken.getByRole('button', { name: 'Delete broken' }).click();
    await broken.getByRole('button', { name: 'Confirm: delete broken' }).click();
    await page.getByRole('row', { name: /^broken / }).waitFor({ state: 'detached' });
    expect((await app.call('GET', '/v2/llms/broken')).status).toBe(404);
    expect(defects()).toEqual([]);
  }, 60_000);

  it('creates an API key whose value is shown once (copy, warning) and gone after a reload, and the key works; disables and revokes it', async () => {
    await open('#/access');
    const keys = page.getByRole('region', { name: 'API keys' });
    const form = page.getByRole('form', { name: 'Create an API key' });
    await form.getByLabel('Key name', { exact: true }).fill('reader');
    await form.getByLabel('Key type', { exact: true }).selectOption('serving');
    await form.getByLabel('Corpora', { exact: true }).fill('notes');
    await form.getByLabel('Corpora', { exact: true }).press('Enter');
    const box = page.getByRole('region', { name: 'New API key reader' });
    await box.getByText('This is the only time it is shown').waitFor();
    const value = await box.getByLabel('API key value').inputValue();
    expect(value).toMatch(/^zqt_aky_\d+_.{20,}$/);
    await box.getByRole('button', { name: 'Copy' }).click();
    await box.getByRole('status').getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);
    expect(await storage()).not.toContain(value);
    await shot('access');

    // The key works against the API, on its corpus.
    const res = await fetch(`${app.url}/v2/corpora?limit=10`, { headers: { 'x-api-key': value } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { corpora: { key: string }[] }).corpora.map((c) => c.key)).toEqual(['notes']);

    // Gone after a reload: the list shows the API's mask.
    await page.reload();
    const row = keys.getByRole('row', { name: /^reader / });
    await row.getByText(/^zqt_aky_\d+_\*\*\*\*$/).waitFor();
    expect(await page.getByRole('region', { name: 'New API key reader' }).count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(value);
    expect(await page.locator('input').evaluateAll((els, v) => els.some((e) => (e as unknown as { value: string }).value === v), value)).toBe(false);

    await row.getByRole('button', { name: 'Disable key reader' }).click();
    await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    expect((await fetch(`${app.url}/v2/corpora`, { headers: { 'x-api-key': value } })).status).toBe(401);
    await row.getByRole('button', { name: 'Revoke key reader' }).click();
    await row.getByRole('button', { name: 'Confirm: revoke key reader' }).click();
    await keys.getByRole('row', { name: /^reader / }).waitFor({ state: 'detached' });
    expect(defects()).toEqual([]);
  }, 60_000);

  it('creates a user (its first key shown once; a bad role at its field) and disables it; creates an app client whose secret is shown once', async () => {
    await open('#/access');
    const users = page.getByRole('form', { name: 'Create a user' });
    await users.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await users.getByLabel('Username', { exact: true }).fill('ada');
    await users.getByLabel('Account and platform roles', { exact: true }).fill('corpus_wizard');
    await users.getByRole('button', { name: 'Create user' }).click();
    await users.locator('.field.invalid', { has: page.getByLabel('Account and platform roles', { exact: true }) }).locator('.field-error').waitFor();
    expect(await users.getByRole('alert').count()).toBe(1);
    await users.getByLabel('Account and platform roles', { exact: true }).fill('corpus_administrator');
    await users.getByLabel('Username', { exact: true }).press('Enter');
    const first = page.getByRole('region', { name: 'First key of ada' });
    const adaKey = await first.getByLabel('Personal API key').inputValue();
    expect(adaKey).toMatch(/^zut_/);
    expect((await fetch(`${app.url}/v2/corpora`, { headers: { 'x-api-key': adaKey } })).status).toBe(200);
    await first.getByRole('button', { name: 'Done' }).click();
    await first.waitFor({ state: 'detached' });
    expect(await page.locator('body').textContent()).not.toContain(adaKey);
    const ada = page.getByRole('row', { name: /^ada / });
    await ada.getByRole('cell', { name: 'corpus_administrator' }).waitFor();
    await ada.getByRole('button', { name: 'Disable user ada' }).click();
    await ada.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    expect((await fetch(`${app.url}/v2/corpora`, { headers: { 'x-api-key': adaKey } })).status).toBe(401);
    // The owner cannot be disabled: the API's refusal, in words.
    await page.getByRole('button', { name: 'Disable user owner' }).click();
    await page.getByRole('alert').getByText(/^409: /).waitFor();

    const clients = page.getByRole('form', { name: 'Create an app client' });
    await clients.getByLabel('Client name', { exact: true }).fill('ci-bot');
    await clients.getByLabel('Account and platform roles', { exact: true }).fill('viewer');
    await clients.getByLabel('Client name', { exact: true }).press('Enter');
    const box = page.getByRole('region', { name: 'New app client ci-bot' });
    const secret = await box.getByLabel('Client secret').inputValue();
    const clientId = (await box.locator('code').first().textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    const token = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }) });
    expect(token.status).toBe(200);
    const client = page.getByRole('row', { name: /^ci-bot / });
    await client.getByRole('cell', { name: '****', exact: true }).waitFor();
    expect(await storage()).not.toContain(secret);
    await page.reload();
    await page.getByRole('row', { name: /^ci-bot / }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain(secret);
    expect(defects()).toEqual([]);
  }, 60_000);

  it('has no serious or critical accessibility violations on the Models and Access pages (axe-core)', async () => {
    expect([...(await axe('#/models')), ...(await axe('#/access'))]).toEqual([]);
  }, 60_000);

  it('as a corpus administrator: Models lists and tests without a register form, Access shows the API keys only, Corpora offers its form; an agent developer sees its own keys', async () => {
    await signIn(await createUser(app, 'cora', { api_roles: ['corpus_administrator'] }));
    await open('#/models');
    const row = page.getByRole('row', { name: /^tester / });
    await row.getByRole('button', { name: 'Test tester' }).click();
    await row.getByRole('region', { name: 'Test of tester' }).getByText('Hello from the scripted model.').waitFor();
    expect(await page.getByRole('form', { name: 'Register a model' }).count()).toBe(0);
    expect(await row.getByRole('button', { name: 'Delete tester' }).count()).toBe(0);
    await open('#/access');
    await page.getByRole('region', { name: 'Users' }).getByRole('status').getByText('This credential may not manage users.').waitFor();
    await page.getByRole('region', { name: 'App clients' }).getByRole('status').getByText('This credential may not manage app clients.').waitFor();
    await page.getByRole('form', { name: 'Create an API key' }).waitFor();
    expect(await page.getByRole('form', { name: 'Create a user' }).count()).toBe(0);
    await open('#/corpora');
    await page.getByRole('form', { name: 'Create a corpus' }).waitFor();

    await signIn(await createUser(app, 'dev', { api_roles: ['agent_developer'] }));
    await open('#/access');
    const keys = page.getByRole('region', { name: 'API keys' });
    await keys.getByText('Your own personal keys').waitFor();
    expect(await keys.getByRole('row').count()).toBe(2); // the header and dev's first key
    await keys.getByRole('row', { name: /^dev / }).getByText(/^zut_aky_\d+_\*\*\*\*$/).waitFor();
    expect(defects()).toEqual([]);
  }, 60_000);

  it('signed in with a query-only key: Models and Access are one clear message each, and Corpora offers no create form', async () => {
    const queryKey = (await createKey(app, { name: 'console query only', api_key_role: 'serving', corpus_keys: ['notes'] })).secret_key;
    await signIn(queryKey);
    for (const [hash, text] of [
      ['#/models', 'This credential may not use the registered language models'],
      ['#/access', 'This credential may not manage users, API keys or app clients'],
    ]) {
      await open(hash);
      await page.getByRole('status').getByText(text).waitFor();
      expect(await page.locator('main form').count()).toBe(0);
      expect(await page.locator('main table').count()).toBe(0);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await page.getByRole('status').count()).toBe(1);
    }
    await open('#/corpora');
    await page.getByRole('table').getByRole('link', { name: 'notes', exact: true }).waitFor();
    await page.getByRole('status').getByText('This credential may not create corpora').waitFor();
    expect(await page.getByRole('heading', { name: 'Create a corpus' }).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect([...(await axe('#/corpora')), ...(await axe('#/models'))]).toEqual([]);
    // Nothing was created by asking.
    expect((await app.call('GET', '/v2/corpora')).body.corpora.map((c: { key: string }) => c.key)).toEqual(['notes']);
    expect(defects()).toEqual([]);
  }, 60_000);
});
