import type { SessionEvent } from '@lib/agents/events';
import type { PipelineRunEvent } from '@lib/pipelines';
import { SCHEDULE_MAX_ATTEMPTS, ScheduleEvent } from '@lib/schedules';
import type { CanaryEvent } from '@lib/aliases/events';
import { SCHEDULE_ATTEMPTS, SOURCE_EVENT_TYPES } from '@lib/webhooks';

/** An event type webhooks read that its context no longer defines fails the typecheck here. */
const defined: readonly (SessionEvent | PipelineRunEvent | ScheduleEvent | CanaryEvent)['type'][] = SOURCE_EVENT_TYPES;

/**
 * libs/webhooks reads other contexts' events by their stored names and copies the one number it needs (it may not
 * import them: docs/architecture.md). Here, where both may be imported, the copies are checked against the originals.
 */
describe('what webhooks read from other contexts', () => {
  it('gives up on a schedule execution at the schedules context’s last attempt', () => {
    expect(SCHEDULE_ATTEMPTS).toBe(SCHEDULE_MAX_ATTEMPTS);
  });

  it('reads source events that their contexts define (checked by the typecheck above)', () => {
    expect(defined.length).toBeGreaterThan(0);
  });
});
