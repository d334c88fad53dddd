import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Response } from 'express';
import { AgentRequest, CreateAgent, DeleteAgent, GetAgent, ListAgents, UpdateAgent } from '@lib/agents';
import { Principal, scopesOf } from '@lib/auth';
import { CommandContext, invalid, listFilter, WriteResult } from '@lib/platform';
import { resolveDynamicTools } from '@lib/tools';
import { pageLimit } from '../http/paging';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { statusFor } from '../http/write-status';
import { CreateAgentDto, UpdateAgentDto } from './agents.dto';
import { OpenApi } from '../openapi/openapi.decorator';

/** `/v2/agents`: create, list, get, update (merge), replace, delete. */
@Controller('v2/agents')
export class AgentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @OpenApi({ body: CreateAgentDto, statuses: [202] })
  @Post()
  @Policy('agent.create')
  async create(@Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(CreateAgentDto, body);
    const { key, ...request } = withDynamicTools(body) as AgentRequest & { key?: string };
    const result: WriteResult<{ key: string }> = await this.commands.execute(new CreateAgent(dto.key, request, caller, ctx));
    return this.answer(result, 201, res);
  }

  @Get()
  @Policy('agent.list')
  async list(@Caller() caller: Principal, @Query('limit') limit?: string, @Query('page_key') pageKey?: string, @Query('filter') filter?: string, @Query('enabled') enabled?: string) {
    const regex = listFilter(filter);
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw invalid('request.invalid', 'enabled must be true or false', { enabled: 'must be true or false' });
    const views = scopesOf(caller.caps, 'agent.view');
    const uses = scopesOf(caller.caps, 'agent.use');
    const visible = views === '*' || uses === '*' ? '*' : [...new Set([...views, ...uses])];
    return this.queries.execute(new ListAgents(pageLimit(limit, 10, 100), visible, pageKey, regex, enabled === undefined ? undefined : enabled === 'true'));
  }

  @Get(':agent_key')
  @Policy('agent.view')
  async get(@Param('agent_key') key: string) {
    return this.queries.execute(new GetAgent(key));
  }

  @OpenApi({ body: UpdateAgentDto, statuses: [202] })
  @Patch(':agent_key')
  @Policy('agent.develop')
  async update(@Param('agent_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    validateBody(UpdateAgentDto, body);
    return this.answer(await this.commands.execute(new UpdateAgent(key, { patch: withDynamicTools(body) as Record<string, unknown> }, caller, ctx)), 200, res);
  }

  @OpenApi({ body: CreateAgentDto, statuses: [202] })
  @Put(':agent_key')
  @Policy('agent.administer')
  async replace(@Param('agent_key') key: string, @Body() body: unknown, @Caller() caller: Principal, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    validateBody(CreateAgentDto, body);
    const { key: _ignored, ...replacement } = withDynamicTools(body) as AgentRequest & { key?: string };
    return this.answer(await this.commands.execute(new UpdateAgent(key, { replacement }, caller, ctx)), 200, res);
  }

  @OpenApi({ statuses: [202] })
  @Delete(':agent_key')
  @Policy('agent.administer')
  @HttpCode(204)
  async remove(@Param('agent_key') key: string, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    statusFor(await this.commands.execute(new DeleteAgent(key, ctx)), 204, res);
  }

  private async answer(result: WriteResult<{ key: string }>, ok: number, res: Response) {
    statusFor(result, ok, res);
    if (!result.visible) return { key: result.value.key };
    return this.queries.execute(new GetAgent(result.value.key));
  }
}

/** The reference's `dynamic_vectara` tools as the built-ins they name, before rights and checks read the types. */
function withDynamicTools(body: unknown): unknown {
  const b = body as { tool_configurations?: unknown };
  return b && typeof b === 'object' && b.tool_configurations && typeof b.tool_configurations === 'object' ? { ...b, tool_configurations: resolveDynamicTools(b.tool_configurations) } : body;
}
