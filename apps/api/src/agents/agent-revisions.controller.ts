import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { AgentRevisions, RestoreAgentRevision } from '@lib/agents';
import { Principal } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { statusFor } from '../http/write-status';
import { OpenApi } from '../openapi/openapi.decorator';

/** A revision number from the path or the query: a non-negative integer, else 400 on the parameter. */
function revisionParam(name: string, raw: string): number {
  if (!/^(0|[1-9]\d{0,8})$/.test(raw)) throw invalid('request.invalid', `${name} must be a non-negative integer`, { [name]: 'must be a non-negative integer' });
  return Number(raw);
}

/**
 * An agent's revisions (issue 45, docs/agents.md "Revisions"): revision 0 is its creation, each update one more.
 * Read with what reads the agent's configuration (`agent.view`); a restore is written with what a PATCH needs.
 */
@Controller('v2/agents/:agent_key/revisions')
export class AgentRevisionsController {
  constructor(
    private readonly revisions: AgentRevisions,
    private readonly commands: CommandBus,
  ) {}

  @Get()
  @Policy('agent.view')
  async list(@Param('agent_key') agentKey: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    const { revisions, more } = await this.revisions.summaries(agentKey, n, offset);
    return { revisions, metadata: more ? { page_key: offsetPageKey(offset + n) } : {} };
  }

  @Get(':revision')
  @Policy('agent.view')
  async get(@Param('agent_key') agentKey: string, @Param('revision') revision: string, @Query('diff_from') diffFrom?: string) {
    return this.revisions.view(agentKey, revisionParam('revision', revision), diffFrom === undefined ? undefined : revisionParam('diff_from', diffFrom));
  }

  /** A new revision equal to revision n (none when it equals the current one); answered as a PATCH is, with `revision`. */
  @OpenApi({ statuses: [202, 409] })
  @Post(':revision/restore')
  @Policy('agent.develop')
  @HttpCode(200)
  async restore(@Param('agent_key') agentKey: string, @Param('revision') revision: string, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const result: { visible: boolean } = await this.commands.execute(new RestoreAgentRevision(agentKey, revisionParam('revision', revision), caller, ctx));
    statusFor(result, 200, res);
    return this.revisions.current(agentKey);
  }
}
