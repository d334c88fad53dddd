import { decideAddDeadLetter, PipelineEvent, pipelineFold, PipelineState } from './pipeline';

const now = new Date('2026-11-25T12:00:00Z');
const fold = (events: PipelineEvent[]): PipelineState => events.reduce<PipelineState>((s, e) => pipelineFold.evolve(s, e), pipelineFold.initialState);
const created = { type: 'PipelineCreated', data: { pipelineId: 'pip_1', key: 'p', settings: {} as never, anchorAt: now.toISOString(), nextDueAt: null, createdAt: now.toISOString() } } as PipelineEvent;
const retryRun = { type: 'PipelineRunRequested', data: { pipelineId: 'pip_1', key: 'p', runId: 'run_1', triggerType: 'retry', retry: [{ recordId: 'https://x.test/a', deadLetterId: 'dl_a' }], requestedAt: now.toISOString() } } as PipelineEvent;
const closed = { type: 'PipelineRunClosed', data: { pipelineId: 'pip_1', key: 'p', runId: 'run_1', closedAt: now.toISOString() } } as PipelineEvent;

describe('adding a dead letter by hand, decided on the pipeline stream', () => {
  it('is refused (409) while the active run retries that very dead letter, and allowed once the run is closed or the dead letter deleted', () => {
    expect(() => decideAddDeadLetter(fold([created, retryRun]), 'p', 'dl_a', 'https://x.test/a', null, now)).toThrow(expect.objectContaining({ kind: 'conflict', code: 'pipeline.dead_letter_retrying' }));
    expect(decideAddDeadLetter(fold([created, retryRun]), 'p', 'dl_b', 'https://x.test/b', null, now).map((e) => e.type)).toEqual(['PipelineDeadLetterAdded']);
    const removed = { type: 'PipelineDeadLetterRemoved', data: { pipelineId: 'pip_1', key: 'p', deadLetterId: 'dl_a', at: now.toISOString() } } as PipelineEvent;
    expect(decideAddDeadLetter(fold([created, retryRun, removed]), 'p', 'dl_a', 'https://x.test/a', null, now).map((e) => e.type)).toEqual(['PipelineDeadLetterAdded']);
    expect(decideAddDeadLetter(fold([created, retryRun, closed]), 'p', 'dl_a', 'https://x.test/a', 'again', now)).toEqual([expect.objectContaining({ type: 'PipelineDeadLetterAdded', data: expect.objectContaining({ deadLetterId: 'dl_a', errorMessage: 'again' }) })]);
  });
});
