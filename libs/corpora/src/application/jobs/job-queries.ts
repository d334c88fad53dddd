import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Condition, READ_STORE, ReadStore } from '@lib/platform';
import { jobNotFound } from '../../domain/job';
import { JOBS, JobRow, jobView } from '../../read-models';

/** A job, if the caller may read its corpus (`readable` undefined = every corpus); otherwise 404 as if absent. */
export class GetJob {
  constructor(
    readonly jobId: string,
    readonly readable?: readonly string[],
  ) {}
}

@QueryHandler(GetJob)
export class GetJobHandler implements IQueryHandler<GetJob, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetJob): Promise<Record<string, unknown>> {
    const row = await this.reads.get<JobRow>(JOBS, q.jobId);
    if (!row || (q.readable && !q.readable.includes(row.corpus_key))) throw jobNotFound(q.jobId);
    return jobView(row);
  }
}

export class ListJobs {
  constructor(
    readonly filter: { readonly corpusKeys?: readonly string[]; readonly states?: readonly string[]; readonly after?: string },
    readonly limit: number,
    readonly pageKey?: string,
    readonly readable?: readonly string[],
  ) {}
}

/** Newest first, as the reference API lists them. */
@QueryHandler(ListJobs)
export class ListJobsHandler implements IQueryHandler<ListJobs, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListJobs): Promise<Record<string, unknown>> {
    let corpora = q.filter.corpusKeys;
    if (q.readable) corpora = corpora ? corpora.filter((k) => q.readable!.includes(k)) : q.readable;
    if (corpora && corpora.length === 0) return { jobs: [], metadata: {} };
    const where: Condition[] = [];
    if (corpora) where.push({ field: 'corpus_key', op: 'in', value: corpora });
    if (q.filter.states?.length) where.push({ field: 'state', op: 'in', value: q.filter.states });
    if (q.filter.after) where.push({ field: 'created_at', op: 'gt', value: q.filter.after });
    const page = await this.reads.find<JobRow>(JOBS, { where, sort: { field: 'created_at', direction: 'desc' }, limit: q.limit, pageKey: q.pageKey });
    return { jobs: page.items.map(jobView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}

/** Waits for a job to end, reading the `jobs` read model; undefined when `timeoutMs` passes first. */
export async function waitForJob(reads: ReadStore, jobId: string, timeoutMs: number): Promise<JobRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const row = await reads.get<JobRow>(JOBS, jobId);
    if (row && (row.state === 'completed' || row.state === 'failed')) return row;
    if (Date.now() >= deadline) return undefined;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, deadline - Date.now()))));
  }
}
