import { USER_TOOLS } from '@lib/tools/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { userToolsProjection } from './user-tools.projection';

describe('user tools projection', () => {
  const log = new EventLog();
  const settings = (code: string, enabled = true) => ({ type: 'lambda', name: 'score', description: 'Scores', language: 'python', code, input_schema: { type: 'object', properties: {} }, enabled });
  log.append('user_tool-tol_score', 'UserToolCreated', { id: 'tol_score', settings: settings('def process():\n    return 1\n'), createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('user_tool-tol_score', 'UserToolUpdated', { id: 'tol_score', settings: settings('def process():\n    return 2\n', false), updatedAt: '2026-01-02T00:00:00.000Z' });
  log.append('user_tool-tol_gone', 'UserToolCreated', { id: 'tol_gone', settings: settings('def process():\n    return 3\n'), createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('user_tool-tol_gone', 'UserToolDeleted', { id: 'tol_gone', deletedAt: '2026-01-03T00:00:00.000Z' });

  it('keeps the last settings of each tool and drops a deleted one', async () => {
    const harness = await given(log.events).project(userToolsProjection);
    expect(await harness.reads.get(USER_TOOLS, 'tol_score')).toMatchObject({ enabled: false, settings: { code: 'def process():\n    return 2\n' }, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z' });
    expect(await harness.reads.get(USER_TOOLS, 'tol_gone')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(userToolsProjection, log.events);
    expect(twice).toEqual(once);
  });
});
