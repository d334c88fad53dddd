import type { Page } from 'playwright-core';
import { CapturedRequest, ScriptedOpenAIServer, ScriptedReply } from '@lib/testing';
import { createKey, createUser } from './support/auth-fixtures';
import { browserSuite, buildConsoleDir, consoleBrowser } from './support/console-browser';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 48: the console's agent pages beyond its configuration — memory blocks, guardrails as a form, connectors
 * (credentials write-only, a Zoom token shown once), a session's traces as a timeline of spans — and keyboard use
 * (Tab through the navigation and a form with a visible focus outline on every stop, Enter submits), in Debian's
 * chromium through playwright-core, started by test/support/console-browser.ts. `CONSOLE_SCREENSHOTS=1`
 * also writes these pages' screenshots to docs/console/.
 */
const suite = browserSuite(__filename);

const BOT_TOKEN = 'xoxb-bot-7d1e4f0a9c';
const SIGNING = 'signing-3b8e2c61f5';

/** The coach remembers what it is told (memory_append), then answers. */
function script(req: CapturedRequest): ScriptedReply {
  const body = req.body as { messages: { role: string }[] };
  if (body.messages.some((m) => m.role === 'tool')) return { content: 'I will remember that.' };
  return { toolCalls: [{ id: 'c1', name: 'memory_append', arguments: JSON.stringify({ block: 'facts', text: 'Ada likes tea.' }) }] };
}

suite('the console: an agent\'s memory, guardrails, connectors and traces; keyboard use (issue 48)', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let page: Page;
  /** Refusals the pages show on purpose (a 400 at its field, a 403 told once) are logged by the browser as failed loads. */
  const web = consoleBrowser({ ignore: /status of 401/, refusals: /status of (400|403|404)/ });
  const { shot, open, signIn, storage, defects: unexpected, axe } = web;

  beforeAll(async () => {
    const consoleDir = await buildConsoleDir('agent-more');
    upstream = await ScriptedOpenAIServer.start();
    upstream.onChat = script;
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', CONSOLE_DIR: consoleDir, WORKER_POLL_MS: '200' } });
    await registerScripted(app, upstream, 'scripted');
    await app.call('POST', '/v2/corpora', { key: 'notes', name: 'Notes' });
    const coach = await app.call('POST', '/v2/agents', {
      key: 'coach',
      name: 'Coach',
      model: { name: 'scripted' },
      tool_configurations: {},
      first_step_name: 'main',
      steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'You coach. Known facts: ${memory.facts}' }] } },
      memory: {
        blocks: [
          { key: 'persona', scope: 'agent', read_only: true, initial_value: 'I am Coach, a patient tutor.' },
          { key: 'facts', scope: 'agent', description: 'What you learnt about the users', limit_chars: 60 },
        ],
      },
    });
    expect(coach.status).toBe(201);
    // A turn in which the agent writes memory: a trace with a model call, a tool call and an answer.
    expect((await app.call('POST', '/v2/agents/coach/sessions', { key: 's1' })).status).toBe(201);
    const turn = await app.call('POST', '/v2/agents/coach/sessions/s1/events', { messages: [{ type: 'text', content: 'I am Ada and I like tea.' }] });
    expect(turn.status).toBeLessThan(300);
    ({ page } = await web.launch(app.url));
    await signIn(app.key);
  }, 150_000);
  afterAll(async () => {
    await web.close();
    await app?.close();
    await upstream?.close();
  });

  it('shows the memory blocks with their limits, saves one (an over-long value refused at its field), and reverts it from its history', async () => {
    await open('#/agents/coach');
    const facts = page.getByRole('form', { name: 'Memory block facts' });
    const value = facts.getByLabel('Value of facts', { exact: true });
    // The agent's own write in the turn above, with its size against the block's limit.
    expect(await value.inputValue()).toBe('Ada likes tea.');
    await facts.getByText('14 of 60 characters (limit_chars)').waitFor();
    await page.getByRole('form', { name: 'Memory block persona' }).getByText('read-only for the agent', { exact: false }).waitFor();
    // Over the limit: the API's error at the field, nothing stored.
    await value.fill('Ada likes tea. '.repeat(5));
    await value.press('Enter');
    await facts.locator('.field.invalid', { has: page.getByLabel('Value of facts', { exact: true }) }).getByText('over its limit of 60', { exact: false }).waitFor();
    expect(await facts.getByRole('alert').count()).toBe(1);
    expect((await app.call('GET', '/v2/agents/coach/memory/facts')).body).toMatchObject({ value: 'Ada likes tea.', revision: 1 });
    await shot('agent-memory');
    // Enter saves (Shift+Enter would start a new line).
    await value.fill('Ada likes green tea.');
    await value.press('Enter');
    await page.getByRole('form', { name: 'Memory block facts' }).getByRole('status').getByText('Saved revision 2.').waitFor();
    expect((await app.call('GET', '/v2/agents/coach/memory/facts')).body).toMatchObject({ value: 'Ada likes green tea.', revision: 2 });
    // History, newest first: revert to the agent's own revision 1.
    await page.getByRole('button', { name: 'History of facts' }).click();
    const history = page.getByRole('region', { name: 'History of facts' });
    await history.getByRole('cell', { name: 'the agent in session s1', exact: false }).waitFor();
    await history.getByRole('button', { name: 'Revert facts to revision 1' }).click();
    await page.getByRole('form', { name: 'Memory block facts' }).getByRole('status').getByText('Reverted to revision 1.').waitFor();
    // (Polled from here: waitForFunction evaluates a string, which the page's CSP refuses.)
    for (let i = 0; i < 100 && (await value.inputValue()) !== 'Ada likes tea.'; i++) await page.waitForTimeout(100);
    expect(await value.inputValue()).toBe('Ada likes tea.');
    expect((await app.call('GET', '/v2/agents/coach/memory/facts')).body).toMatchObject({ value: 'Ada likes tea.', revision: 3 });
    expect(unexpected()).toEqual([]);
  }, 60_000);

  it('edits the guardrails as a form: a refused pattern\'s error at its field, then a save the API stores', async () => {
    await open('#/agents/coach');
    const form = page.getByRole('form', { name: 'Guardrails' });
    await form.getByText('No guardrails.').waitFor();
    await form.getByRole('button', { name: 'Add a guardrail' }).click();
    const box = form.getByRole('group', { name: 'Guardrail 1' });
    expect(await box.getByLabel('Type', { exact: true }).inputValue()).toBe('pattern');
    await box.getByLabel('Name', { exact: true }).fill('no_cards');
    await box.getByLabel('On', { exact: true }).selectOption('output');
    await box.getByLabel('Action', { exact: true }).selectOption('redact');
    // A lookbehind needs backtracking: RE2 refuses it, on its line.
    await box.getByLabel('Patterns', { exact: true }).fill('\\b\\d{4} \\d{4} \\d{4} \\d{4}\\b\n(?<=card )\\d+');
    await box.getByLabel('Name', { exact: true }).press('Enter');
    const patterns = box.locator('.field.invalid', { has: page.getByLabel('Patterns', { exact: true }) });
    await patterns.getByText(/^line 2: /).waitFor();
    expect(await form.getByRole('alert').count()).toBe(1);
    expect((await app.call('GET', '/v2/agents/coach')).body.guardrails ?? null).toBeNull();
    await shot('agent-guardrails');
    // A tool_call guardrail takes no redact: the form offers flag and block only.
    await box.getByLabel('On', { exact: true }).selectOption('tool_call');
    expect(await box.getByLabel('Action', { exact: true }).locator('option').allTextContents()).toEqual(['flag', 'block']);
    await box.getByLabel('On', { exact: true }).selectOption('output');
    await box.getByLabel('Action', { exact: true }).selectOption('redact');
    await box.getByLabel('Patterns', { exact: true }).fill('\\b\\d{4} \\d{4} \\d{4} \\d{4}\\b\n(?i)card \\d+');
    await box.getByLabel('Name', { exact: true }).press('Enter');
    await form.getByRole('status').getByText('Saved 1 guardrail.').waitFor();
    // A new revision of the agent, in the Revisions panel without a reload.
    await page.getByRole('cell', { name: 'guardrails', exact: false }).first().waitFor();
    expect((await app.call('GET', '/v2/agents/coach')).body.guardrails).toEqual([
      expect.objectContaining({ type: 'pattern', name: 'no_cards', on: 'output', action: 'redact', patterns: ['\\b\\d{4} \\d{4} \\d{4} \\d{4}\\b', '(?i)card \\d+'] }),
    ]);
    // Read back as stored after a reload.
    await page.reload();
    expect(await page.getByRole('group', { name: 'Guardrail 1' }).getByLabel('Patterns', { exact: true }).inputValue()).toBe('\\b\\d{4} \\d{4} \\d{4} \\d{4}\\b\n(?i)card \\d+');
    expect(unexpected()).toEqual([]);
  }, 60_000);

  it('creates connectors with write-only credentials (a bad app id at its field), shows a Zoom token once, and deletes one', async () => {
    await open('#/agents/coach');
    const form = page.getByRole('form', { name: 'Add a connector' });
    await form.getByLabel('Connector name', { exact: true }).fill('Support Slack');
    await form.getByLabel('Slack app id', { exact: true }).fill('not an id');
    await form.getByLabel('Bot token', { exact: true }).fill(BOT_TOKEN);
    expect(await form.getByLabel('Bot token', { exact: true }).getAttribute('type')).toBe('password');
    await form.getByLabel('Signing secret', { exact: true }).fill(SIGNING);
    await form.getByLabel('Connector name', { exact: true }).press('Enter');
    await form.locator('.field.invalid', { has: page.getByLabel('Slack app id', { exact: true }) }).getByText('is required: the Slack app id', { exact: false }).waitFor();
    expect(await form.getByRole('alert').count()).toBe(1);
    // The credentials left the page with the request: typed again.
    expect(await form.getByLabel('Bot token', { exact: true }).inputValue()).toBe('');
    expect((await app.call('GET', '/v2/agents/coach/connectors')).body.connectors).toEqual([]);
    await form.getByLabel('Slack app id', { exact: true }).fill('A0SUPPORT');
    await form.getByLabel('Bot token', { exact: true }).fill(BOT_TOKEN);
    await form.getByLabel('Signing secret', { exact: true }).fill(SIGNING);
    await form.getByLabel('Signing secret', { exact: true }).press('Enter');
    await form.getByRole('status').getByText('Created connector Support Slack.').waitFor();
    const table = page.getByRole('table', { name: 'Connectors' });
    const slack = table.getByRole('row', { name: /^Support Slack / });
    await slack.getByText('Bot token: ****, Signing secret: ****').waitFor();
    const stored = (await app.call('GET', '/v2/agents/coach/connectors')).body.connectors[0];
    expect(stored.configuration).toMatchObject({ type: 'slack', api_app_id: 'A0SUPPORT', bot_token: '****', signing_secret: '****' });
    await slack.getByText(stored.configuration.webhook_path).waitFor();
    const text = (await page.locator('body').textContent()) ?? '';
    for (const secret of [BOT_TOKEN, SIGNING]) {
      expect(text).not.toContain(secret);
      expect(await storage()).not.toContain(secret);
      expect(await page.locator('input').evaluateAll((els, v) => els.some((e) => (e as unknown as { value: string }).value === v), secret)).toBe(false);
    }

    // Zoom: the service generates the token and shows it in the create answer only.
    await form.getByLabel('Connector type', { exact: true }).selectOption('zoom');
    await form.getByLabel('Connector name', { exact: true }).fill('Contact center');
    await form.getByLabel('Callback URL', { exact: true }).fill('http://127.0.0.1:9/zoom-callback');
    await form.getByLabel('Callback URL', { exact: true }).press('Enter');
    const once = page.getByRole('region', { name: 'Zoom connector token of Contact center' });
    const token = await once.getByLabel('Connector token', { exact: true }).inputValue();
    expect(token.length).toBeGreaterThan(30);
    await shot('agent-connectors');
    expect(await storage()).not.toContain(token);
    await once.getByRole('button', { name: 'Done' }).click();
    await once.waitFor({ state: 'detached' });
    await table.getByRole('row', { name: /^Contact center / }).getByText('Connector token: ****').waitFor();
    expect(await page.locator('body').textContent()).not.toContain(token);

    // Delete asks first.
    await slack.getByRole('button', { name: 'Delete Support Slack' }).click();
    await slack.getByRole('button', { name: 'Really delete Support Slack' }).click();
    await slack.waitFor({ state: 'detached' });
    expect((await app.call('GET', '/v2/agents/coach/connectors')).body.connectors.map((c: { name: string }) => c.name)).toEqual(['Contact center']);
    expect(unexpected()).toEqual([]);
  }, 60_000);

  it('shows a session\'s trace as a timeline of spans on a time axis, with a span\'s attributes on demand', async () => {
    await open('#/agents/coach');
    await page.getByRole('link', { name: 'Traces of s1' }).click();
    await page.getByRole('heading', { name: 'Traces of session s1', level: 1 }).waitFor();
    // The session's timeline of events links here too.
    await page.getByRole('link', { name: 'Timeline of events' }).click();
    await page.getByRole('heading', { name: 'History of s1', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Traces', exact: true }).click();
    await page.getByRole('heading', { name: 'Traces of session s1', level: 1 }).waitFor();
    // The turn's trace is listed once its projection has it.
    const spans = page.getByRole('list', { name: 'Spans' });
    await spans.waitFor({ timeout: 20_000 });
    const names = await spans.locator('.span-name').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['invoke_agent', 'chat scripted', 'execute_tool memory_append', 'output']));
    expect(names[0]).toBe('invoke_agent');
    await page.getByRole('navigation', { name: 'Turns' }).getByRole('link', { name: /^Turn 1 · .* · ok$/ }).waitFor();
    // Each span a bar: the turn spans the whole axis, the others inside it.
    const bars = await spans.locator('.bar').evaluateAll((els) => els.map((e) => (e as unknown as { style: { left: string; width: string } }).style).map((st) => ({ left: parseFloat(st.left), width: parseFloat(st.width) })));
    expect(bars[0]).toEqual({ left: 0, width: 100 });
    for (const b of bars) expect(b.left + b.width).toBeLessThanOrEqual(100.01);
    const tool = spans.locator('li', { has: page.getByRole('button', { name: 'execute_tool memory_append' }) });
    expect(await tool.locator('.span-meta').textContent()).toMatch(/^\d+ ms · ok$|^\d+\.\d+ s · ok$/);
    await tool.getByRole('button', { name: 'execute_tool memory_append' }).click();
    const detail = page.getByRole('region', { name: 'Attributes of execute_tool memory_append' });
    await detail.getByText('"tool_type": "memory_append"', { exact: false }).waitFor();
    await detail.getByText('Ada likes tea.', { exact: false }).waitFor();
    await shot('traces');
    expect(unexpected()).toEqual([]);
  }, 60_000);

  it('is usable from the keyboard: Tab through the navigation and a form, each stop with a visible outline, Enter submits', async () => {
    await open('#/agents/coach');
    // A fresh load: the walk starts at the top of the document (a hash change would keep the last focus).
    await page.reload();
    await page.getByRole('form', { name: 'Memory block facts' }).waitFor();
    interface Stop {
      tag: string;
      text: string;
      inMemory: boolean;
      inNav: boolean;
      outline: string;
      visible: boolean;
    }
    /** The focused element, and whether its computed outline shows (the browser's own style, after :focus-visible). */
    const focused = () =>
      page.evaluate(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return undefined;
        const style = getComputedStyle(el);
        return {
          tag: el.tagName.toLowerCase(),
          text: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40),
          inMemory: !!el.closest('form[aria-label="Memory block facts"]'),
          inNav: !!el.closest('nav[aria-label="Sections"]'),
          outline: style.outlineStyle + ' ' + style.outlineWidth,
          visible: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        };
      })()`) as Promise<Stop | undefined>;
    const stops: Stop[] = [];
    for (let i = 0; i < 300; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      if (!f) continue;
      stops.push(f);
      if (f.inMemory && f.tag === 'textarea') break;
    }
    // The walk went through the skip link, every section of the navigation, and reached the form's field.
    expect(stops[0].text).toBe('Skip to content');
    const nav = stops.filter((s) => s.inNav).map((s) => s.text);
    expect(nav).toEqual(expect.arrayContaining(['Corpora', 'Query', 'Agents', 'Models', 'Access', 'Sign out']));
    expect(stops.at(-1)).toMatchObject({ inMemory: true, tag: 'textarea' });
    // Every stop shows where the focus is.
    expect(stops.filter((s) => !s.visible).map((s) => `${s.tag} "${s.text}" ${s.outline}`)).toEqual([]);
    // Enter submits the form the focus is in.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Ada drinks tea at four.');
    await page.keyboard.press('Enter');
    await page.getByRole('form', { name: 'Memory block facts' }).getByRole('status').getByText(/^Saved revision \d+\.$/).waitFor();
    expect((await app.call('GET', '/v2/agents/coach/memory/facts')).body.value).toBe('Ada drinks tea at four.');
    // On through the rest of the page: every control keeps a visible outline.
    const rest: Stop[] = [];
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      if (f) rest.push(f);
    }
    expect(rest.filter((s) => !s.visible).map((s) => `${s.tag} "${s.text}" ${s.outline}`)).toEqual([]);
    expect(unexpected()).toEqual([]);
  }, 90_000);

  it('has no serious or critical accessibility violations on these pages (axe-core, WCAG 2 A and AA)', async () => {
    const found: string[] = [];
    await open('#/agents/coach');
    await page.getByRole('form', { name: 'Memory block facts' }).waitFor();
    await page.getByRole('button', { name: 'History of facts' }).click();
    await page.getByRole('region', { name: 'History of facts' }).getByRole('table').waitFor();
    found.push(...(await axe('#/agents/coach')));
    // With field errors shown (memory, guardrails, connectors).
    await page.getByLabel('Value of facts', { exact: true }).fill('x'.repeat(61));
    await page.getByLabel('Value of facts', { exact: true }).press('Enter');
    await page.locator('form[aria-label="Memory block facts"] .field.invalid').waitFor();
    const connector = page.getByRole('form', { name: 'Add a connector' });
    await connector.getByLabel('Connector name', { exact: true }).fill('Bad');
    await connector.getByLabel('Connector name', { exact: true }).press('Enter');
    await connector.locator('.field.invalid').first().waitFor();
    found.push(...(await axe('#/agents/coach with field errors')));
    await open('#/agents/coach/sessions/s1/traces');
    await page.getByRole('list', { name: 'Spans' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'chat scripted' }).first().click();
    found.push(...(await axe('#/agents/coach/sessions/s1/traces')));
    expect(found).toEqual([]);
  }, 90_000);

  it('an agent viewer reads memory and traces but its writes are refused once; a query-only key is told once', async () => {
    const viewer = await createUser(app, 'viewer', { agent_roles: [{ agent_key: 'coach', role: 'agent_viewer' }] });
    const before = (await app.call('GET', '/v2/agents/coach/memory/facts')).body.revision;
    await signIn(viewer);
    await open('#/agents/coach');
    const facts = page.getByRole('form', { name: 'Memory block facts' });
    await facts.getByLabel('Value of facts', { exact: true }).fill('A viewer was here.');
    await facts.getByLabel('Value of facts', { exact: true }).press('Enter');
    await facts.getByRole('alert').getByText(/^403: /).waitFor();
    expect(await facts.getByRole('alert').count()).toBe(1);
    expect((await app.call('GET', '/v2/agents/coach/memory/facts')).body.revision).toBe(before);
    // Connectors need agent administration: one line, no form, no table.
    await page.getByRole('status').getByText("This credential may not manage this agent's connectors").waitFor();
    expect(await page.getByRole('form', { name: 'Add a connector' }).count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Connectors' }).count()).toBe(0);
    await open('#/agents/coach/sessions/s1/traces');
    await page.getByRole('list', { name: 'Spans' }).waitFor({ timeout: 20_000 });

    const queryKey = (await createKey(app, { name: 'query only', api_key_role: 'serving', corpus_keys: ['notes'] })).secret_key;
    await signIn(queryKey);
    await open('#/agents/coach/sessions/s1/traces');
    await page.getByRole('status').getByText('This credential may not read traces').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('list', { name: 'Spans' }).count()).toBe(0);
    const found = await axe('#/agents/coach/sessions/s1/traces (query-only key)');
    await open('#/agents/coach');
    // A data key bounded to its corpora sees no agents: the API's 404, said once (not once per panel).
    await page.getByRole('status').getByText('Agent "coach" does not exist (the service answered 404 to this credential).').waitFor();
    await page.waitForLoadState('networkidle').catch(() => undefined);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Memory block facts' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Add a connector' }).count()).toBe(0);
    expect(found).toEqual([]);
    expect(unexpected()).toEqual([]);
  }, 60_000);
});
