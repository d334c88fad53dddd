import { JOBS, jobView, JobRow } from '@lib/corpora/read-models';
import { corporaHistory, given, onceAndTwice } from '@lib/testing';
import { jobsProjection } from './jobs.projection';

function history() {
  const s = corporaHistory();
  s.jobQueued('job_1', 'a');
  s.jobStarted('job_1');
  s.jobProgressed('job_1', 1);
  s.jobProgressed('job_1', 2);
  s.jobCompleted('job_1', 2);
  s.jobQueued('job_2', 'a');
  s.jobStarted('job_2');
  s.jobFailed('job_2', 'corpus deleted');
  s.jobQueued('job_3', 'b');
  return s.log.events;
}

describe('jobs projection', () => {
  it('keeps each job with its state and progress, as /v2/jobs shows it', async () => {
    const h = await given(history()).project(jobsProjection);
    const view = async (id: string) => jobView((await h.reads.get<JobRow>(JOBS, id))!);
    expect(await view('job_1')).toMatchObject({ state: 'completed', corpus_keys: ['a'], created_by_username: 'ada', progress: { total: 2, processed: 2, updated: 2 } });
    expect(await view('job_2')).toMatchObject({ state: 'failed', comment: 'corpus deleted', progress: { failed: 1 } });
    expect(await view('job_3')).toMatchObject({ state: 'queued', progress: { total: 2, processed: 0 } });
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(jobsProjection, history());
    expect(once).toMatchObject({ [JOBS]: [{ id: 'job_1' }, { id: 'job_2' }, { id: 'job_3' }] });
    expect(twice).toEqual(once);
  });
});
