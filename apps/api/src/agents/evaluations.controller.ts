import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { EvaluationRequest, Evaluations } from '@lib/agents';
import { CommandContext, invalid } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { CreateEvaluationDto } from './evaluations.dto';

/** A candidate revision's evaluation over recorded sessions (docs/evaluations.md): run by the worker wing. */
@Controller('v2/agents/:agent_key/evaluations')
export class EvaluationsController {
  constructor(private readonly evaluations: Evaluations) {}

  @OpenApi({ body: CreateEvaluationDto, status: 202 })
  @Post()
  @Policy('agent.develop')
  async create(@Param('agent_key') agentKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateEvaluationDto, body);
    const revision = dto.candidate_revision;
    if (revision === undefined) throw invalid('request.invalid', 'candidate_revision is required (a revision number or "current")', { candidate_revision: 'required' });
    if (revision !== 'current' && !(typeof revision === 'number' && Number.isInteger(revision) && revision >= 0)) throw invalid('request.invalid', 'candidate_revision must be a revision number or "current"', { candidate_revision: 'a non-negative integer or "current"' });
    res.status(202);
    return this.evaluations.create(agentKey, dto as unknown as EvaluationRequest, ctx);
  }

  @OpenApi({ query: ['limit', 'page_key'] })
  @Get()
  @Policy('agent.view')
  list(@Param('agent_key') agentKey: string, @Query() q: Record<string, string | undefined>) {
    return this.evaluations.list(agentKey, pageLimit(q.limit, 10, 100), q.page_key || undefined);
  }

  @Get(':evaluation_id')
  @Policy('agent.view')
  get(@Param('agent_key') agentKey: string, @Param('evaluation_id') id: string) {
    return this.evaluations.get(agentKey, id);
  }

  @OpenApi({ statuses: [409] })
  @Post(':evaluation_id/cancel')
  @HttpCode(200)
  @Policy('agent.develop')
  cancel(@Param('agent_key') agentKey: string, @Param('evaluation_id') id: string, @Ctx() ctx: CommandContext) {
    return this.evaluations.cancel(agentKey, id, ctx);
  }
}
