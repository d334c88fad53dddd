import { DomainError } from '@lib/platform/kernel';
import { parseConfiguration } from './connector-config';
import { CONNECTOR_REPLY_ATTEMPTS, connectorMessageFold, ConnectorMessageEvent, ConnectorMessageState, decideDelivery, decideReceive } from './connector-message';

const fieldOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    return Object.keys((e as DomainError).details.fieldErrors ?? {});
  }
  return [];
};

describe('connector configuration', () => {
  it('names the field of each problem', () => {
    expect(fieldOf(() => parseConfiguration({ type: 'slack', bot_token: 'x', signing_secret: 'y' }, []))).toEqual(['configuration.api_app_id']);
    expect(fieldOf(() => parseConfiguration({ type: 'slack', bot_token: { $ref: 'agent.secrets.t' }, signing_secret: 'y', api_app_id: 'A1' }, []))).toEqual(['configuration.bot_token']);
    expect(fieldOf(() => parseConfiguration({ type: 'zoom', callback_url: 'http://zcc.example/cb' }, []))).toEqual(['configuration.callback_url']);
    expect(fieldOf(() => parseConfiguration({ type: 'zoom', callback_url: 'https://zcc.example/cb', connector_token: 'mine' }, []))).toEqual(['configuration.connector_token']);
    expect(fieldOf(() => parseConfiguration({ type: 'gchat', service_account_key: 'k', api_app_id: 'A1' }, []))).toEqual(['configuration.api_app_id']);
    // A mask is no credential: on create there is nothing stored for it to stand for.
    expect(fieldOf(() => parseConfiguration({ type: 'slack', bot_token: '****', signing_secret: 'y', api_app_id: 'A1' }, []))).toEqual(['configuration.bot_token']);
  });

  it('keeps credentials an update leaves out, and takes references by name', () => {
    const first = parseConfiguration({ type: 'slack', bot_token: { $ref: 'agent.secrets.slack_bot_token' }, signing_secret: 's3cret', api_app_id: 'A1' }, ['slack_bot_token']);
    expect(first.secrets).toEqual({ bot_token: { ref: 'slack_bot_token' }, signing_secret: { sealed: true } });
    expect(first.literals).toEqual({ signing_secret: 's3cret' });
    const next = parseConfiguration({ type: 'slack', signing_secret: '****', respond_to_thread_replies: true }, ['slack_bot_token'], first);
    expect(next.secrets).toEqual(first.secrets);
    expect(next.plain).toMatchObject({ api_app_id: 'A1', respond_to_thread_replies: true });
  });
});

describe('connector replies', () => {
  const received = { agentId: 'a', agentKey: 'k', connectorId: 'con_1', deliveryId: 'd', type: 'zoom' as const, conversation: 'c', sessionKey: 's', text: 't', replyTo: {}, receivedAt: '2026-01-01T00:00:00.000Z' };
  const fold = (events: ConnectorMessageEvent[]) => events.reduce<ConnectorMessageState>(connectorMessageFold.evolve, connectorMessageFold.initialState);

  it('stores a delivery once: the platform retrying it adds nothing', () => {
    const first = decideReceive(connectorMessageFold.initialState, received);
    expect(first).toHaveLength(1);
    expect(decideReceive(fold(first), received)).toEqual([]);
  });

  it('backs off doubling from the base, reports the last failure as final, and records an attempt once', () => {
    let events = decideReceive(connectorMessageFold.initialState, received);
    const now = new Date('2026-01-01T00:00:00.000Z');
    const retries: (string | null)[] = [];
    for (let attempt = 1; attempt <= CONNECTOR_REPLY_ATTEMPTS; attempt++) {
      const failed = decideDelivery(fold(events), attempt, { ok: false, error: 'down' }, 1000, now);
      expect(decideDelivery(fold([...events, ...failed]), attempt, { ok: false, error: 'down' }, 1000, now)).toEqual([]);
      events = [...events, ...failed];
      retries.push((failed[0].data as { retryAt: string | null }).retryAt);
    }
    expect(retries).toEqual(['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:04.000Z', '2026-01-01T00:00:08.000Z', null]);
    expect(fold(events)).toMatchObject({ done: true });
    expect(decideDelivery(fold(events), CONNECTOR_REPLY_ATTEMPTS + 1, { ok: true }, 1000, now)).toEqual([]);
  });
});
