import { Controller, Get, Param, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { GetJob, ListJobs } from '@lib/corpora';
import { invalid } from '@lib/platform';
import { Principal, scopesOf } from '@lib/auth';
import { Caller } from '../http/caller';
import { Policy } from '../http/policy';
import { pageLimit } from '../http/paging';

const STATES = ['queued', 'started', 'completed', 'failed'];

/** Background jobs; a caller sees the jobs of the corpora it may read (others are 404, as absent). */
@Controller('v2/jobs')
export class JobsController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @Policy('jobs.read')
  async list(
    @Caller() caller: Principal,
    @Query('corpus_key') corpusKey?: string | string[],
    @Query('state') state?: string | string[],
    @Query('after') after?: string,
    @Query('limit') limit?: string,
    @Query('page_key') pageKey?: string,
  ) {
    const list = (v?: string | string[]) => (v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).filter(Boolean));
    const states = list(state);
    const bad = states?.find((s) => !STATES.includes(s));
    if (bad) throw invalid('request.invalid', `state must be one of ${STATES.join(', ')}`, { state: `unknown state "${bad}"` });
    if (after !== undefined && Number.isNaN(Date.parse(after))) throw invalid('request.invalid', 'after must be an ISO 8601 date-time', { after: 'not a date-time' });
    const scopes = scopesOf(caller.caps, 'corpus.read');
    return this.queries.execute(
      new ListJobs(
        { corpusKeys: list(corpusKey), states, after: after ? new Date(after).toISOString() : undefined },
        pageLimit(limit, 10, 100),
        pageKey,
        scopes === '*' ? undefined : scopes,
      ),
    );
  }

  @Get(':job_id')
  @Policy('jobs.read')
  async get(@Caller() caller: Principal, @Param('job_id') jobId: string) {
    const scopes = scopesOf(caller.caps, 'corpus.read');
    return this.queries.execute(new GetJob(jobId, scopes === '*' ? undefined : scopes));
  }
}
