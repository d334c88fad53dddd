import { FakePlatforms, slackHeaders } from './support/connector-platforms';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 41, finding 17 (docs/connectors.md, docs/security.md): connector webhooks are limited like the API. A
 * delivery that fails its platform's authentication (or names no connector) counts as a failed authentication of
 * its address (AUTH_FAILURES_PER_MINUTE): 429 past the limit, except for a connector that already authenticated
 * from there. Authenticated deliveries count per connector (RATE_LIMIT_PER_CONNECTOR_PER_MINUTE): 429 past it,
 * nothing stored, other connectors unaffected. Small limits so each is reached in a few requests.
 */
describe('connector webhook limits', () => {
  let app: TestApp;
  let platforms: FakePlatforms;
  const SIGNING = 'slack-signing-secret-limits-0123456789';

  const connector = async (name: string, signing = SIGNING) => {
    const created = await app.call('POST', '/v2/agents/helper/connectors', { name, configuration: { type: 'slack', bot_token: 'xoxb-limits', signing_secret: signing, api_app_id: 'A1' } });
    expect(created.status).toBe(201);
    return { id: created.body.id as string, path: created.body.configuration.webhook_path as string };
  };
  const deliver = (path: string, body: string, secret: string) => app.call('POST', path, body, { 'x-api-key': '', ...slackHeaders(secret, body) });
  const challenge = (n: number) => JSON.stringify({ type: 'url_verification', token: 'x', challenge: `ch-${n}` });
  const mention = (n: number) => JSON.stringify({ type: 'event_callback', api_app_id: 'A1', team_id: 'T1', event_id: `Ev${n}`, event: { type: 'app_mention', user: 'U1', text: `<@UBOT> hello ${n}`, channel: 'C1', ts: `1700000000.00${100 + n}` } });
  const stored = async (connectorId: string) => ((await app.call('GET', '/v2/events?limit=1000&category=connector_message')).body.events as { data: { connectorId: string } }[]).filter((e) => e.data.connectorId === connectorId).length;

  beforeAll(async () => {
    platforms = await FakePlatforms.start();
    app = await startTestApp({ env: { ...platforms.env, AUTH_FAILURES_PER_MINUTE: '5', RATE_LIMIT_PER_CONNECTOR_PER_MINUTE: '4' } });
    await app.call('POST', '/v2/llms', { name: 'm', model: 'm', uri: 'http://127.0.0.1:9/v1/chat/completions' });
    expect((await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await platforms?.close();
  });

  it('counts authenticated deliveries per connector: 429 with Retry-After past the limit, nothing stored, others unaffected', async () => {
    const busy = await connector('Busy');
    const other = await connector('Other');
    for (let n = 0; n < 4; n++) expect((await deliver(busy.path, challenge(n), SIGNING)).status).toBe(200);
    const limited = await deliver(busy.path, mention(1), SIGNING);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({ messages: [expect.stringMatching(/deliveries to this connector/)], request_id: expect.any(String) });
    expect(await stored(busy.id)).toBe(0);
    expect((await deliver(other.path, mention(2), SIGNING)).status).toBe(200);
    expect(await stored(other.id)).toBe(1);
  });

  it('counts failed platform authentications per address with the API’s failures: 429 past AUTH_FAILURES_PER_MINUTE', async () => {
    const known = await connector('Known');
    const fresh = await connector('Fresh', 'another-signing-secret-0123456789');
    // Authenticated from this address before the failures: it goes on working.
    expect((await deliver(known.path, challenge(10), SIGNING)).status).toBe(200);
    const forged: number[] = [];
    for (let n = 0; n < 3; n++) forged.push((await deliver(known.path, mention(10 + n), 'forged-secret')).status);
    // A webhook of no connector is a guess too.
    for (let n = 0; n < 2; n++) forged.push((await deliver(`/v2/agents/helper/connectors/con_nosuch${n}/input`, challenge(n), SIGNING)).status);
    expect(forged).toEqual([401, 401, 401, 404, 404]);
    const blocked = await deliver(known.path, mention(20), 'forged-secret');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // A forged API key from the address is refused the same way: one count for every credential.
    expect((await app.call('GET', '/v2/corpora', undefined, { 'x-api-key': 'zqt_aky_999_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(429);
    // A connector that authenticated here before still gets its deliveries; one new to the address waits like a guess.
    expect((await deliver(known.path, challenge(11), SIGNING)).status).toBe(200);
    expect((await deliver(fresh.path, challenge(12), 'another-signing-secret-0123456789')).status).toBe(429);
    expect(await stored(known.id)).toBe(0);
  });
});
