import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { AgentMemory, MemoryOwner } from '@lib/agents';
import { EndUserSessions } from '@lib/aliases';
import { Principal } from '@lib/auth';
import { CommandContext, invalid } from '@lib/platform';
import { Caller } from '../http/caller';
import { Ctx } from '../http/command-context';
import { offsetOfPageKey, offsetPageKey, pageLimit } from '../http/paging';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { endUserCaller } from './end-user-sessions.controller';

class PutMemoryDto {
  /** The block's new value; its own `limit_chars` (at most 20,000) is checked by the domain. */
  @IsString() @MaxLength(20_000) value!: string;
}

class RevertMemoryDto {
  @IsInt() @Min(0) @Max(1_000_000_000) revision!: number;
}

class RevertSessionMemoryDto {
  /** Revert blocks someone else changed after the session did (their later changes are undone too). */
  @IsOptional() @IsBoolean() force?: boolean;
}

const AGENT: MemoryOwner = { scope: 'agent' };

/** An end user as a path parameter: the owner an operator sees on the agent's sessions (`end_user`). */
function endUserOf(raw: string): MemoryOwner {
  if (!raw || raw.length > 300) throw invalid('request.invalid', 'end_user must be 1 to 300 characters (the end_user of a session)', { end_user: 'must be 1 to 300 characters' });
  return { scope: 'end_user', endUser: raw };
}

/**
 * Memory blocks (issue 46, docs/agents.md "Memory"): an agent's own blocks, an end user's, a session's, their history
 * and reverts. Read with what reads the agent (`agent.view`: memory is what the agent knows, like its instructions);
 * written with what changes its configuration (`agent.develop`).
 */
@Controller('v2/agents/:agent_key')
export class MemoryController {
  constructor(private readonly memory: AgentMemory) {}

  @Get('memory')
  @Policy('agent.view')
  list(@Param('agent_key') agentKey: string) {
    return this.memory.list(agentKey, AGENT);
  }

  @Get('memory/:block')
  @Policy('agent.view')
  get(@Param('agent_key') agentKey: string, @Param('block') block: string) {
    return this.memory.get(agentKey, block, AGENT);
  }

  @OpenApi({ body: PutMemoryDto })
  @Put('memory/:block')
  @Policy('agent.develop')
  put(@Param('agent_key') agentKey: string, @Param('block') block: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.memory.edit(agentKey, block, AGENT, { operation: 'put', value: validateBody(PutMemoryDto, body).value }, ctx);
  }

  @Get('memory/:block/history')
  @Policy('agent.view')
  history(@Param('agent_key') agentKey: string, @Param('block') block: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.page(agentKey, block, AGENT, limit, pageKey);
  }

  @OpenApi({ body: RevertMemoryDto })
  @Post('memory/:block/revert')
  @HttpCode(200)
  @Policy('agent.develop')
  revert(@Param('agent_key') agentKey: string, @Param('block') block: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.memory.edit(agentKey, block, AGENT, { operation: 'revert', revision: validateBody(RevertMemoryDto, body).revision }, ctx);
  }

  @Get('end_users/:end_user/memory')
  @Policy('agent.view')
  listEndUser(@Param('agent_key') agentKey: string, @Param('end_user') endUser: string) {
    return this.memory.list(agentKey, endUserOf(endUser));
  }

  @Get('end_users/:end_user/memory/:block')
  @Policy('agent.view')
  getEndUser(@Param('agent_key') agentKey: string, @Param('end_user') endUser: string, @Param('block') block: string) {
    return this.memory.get(agentKey, block, endUserOf(endUser));
  }

  @OpenApi({ body: PutMemoryDto })
  @Put('end_users/:end_user/memory/:block')
  @Policy('agent.develop')
  putEndUser(@Param('agent_key') agentKey: string, @Param('end_user') endUser: string, @Param('block') block: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const owner = endUserOf(endUser);
    return this.memory.edit(agentKey, block, owner, { operation: 'put', value: validateBody(PutMemoryDto, body).value }, ctx);
  }

  @Get('end_users/:end_user/memory/:block/history')
  @Policy('agent.view')
  historyEndUser(@Param('agent_key') agentKey: string, @Param('end_user') endUser: string, @Param('block') block: string, @Query('limit') limit?: string, @Query('page_key') pageKey?: string) {
    return this.page(agentKey, block, endUserOf(endUser), limit, pageKey);
  }

  @OpenApi({ body: RevertMemoryDto })
  @Post('end_users/:end_user/memory/:block/revert')
  @HttpCode(200)
  @Policy('agent.develop')
  revertEndUser(@Param('agent_key') agentKey: string, @Param('end_user') endUser: string, @Param('block') block: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    const owner = endUserOf(endUser);
    return this.memory.edit(agentKey, block, owner, { operation: 'revert', revision: validateBody(RevertMemoryDto, body).revision }, ctx);
  }

  /** The session's own blocks (scope `session`), as its events are read. */
  @Get('sessions/:session_key/memory')
  @Policy('agent.view')
  sessionMemory(@Param('agent_key') agentKey: string, @Param('session_key') sessionKey: string) {
    return this.memory.sessionBlocks(agentKey, sessionKey);
  }

  /** Everything the session's tool calls changed in agent and end-user blocks, oldest first. */
  @Get('sessions/:session_key/memory_changes')
  @Policy('agent.view')
  sessionChanges(@Param('agent_key') agentKey: string, @Param('session_key') sessionKey: string) {
    return this.memory.sessionChanges(agentKey, sessionKey);
  }

  @OpenApi({ body: RevertSessionMemoryDto, statuses: [409] })
  @Post('sessions/:session_key/memory_changes/revert')
  @HttpCode(200)
  @Policy('agent.develop')
  revertSession(@Param('agent_key') agentKey: string, @Param('session_key') sessionKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext) {
    return this.memory.revertSession(agentKey, sessionKey, validateBody(RevertSessionMemoryDto, body).force === true, ctx);
  }

  private async page(agentKey: string, block: string, owner: MemoryOwner, limit?: string, pageKey?: string) {
    const offset = offsetOfPageKey(pageKey);
    const n = pageLimit(limit, 10, 100);
    const { changes, more } = await this.memory.history(agentKey, block, owner, n, offset);
    return { changes, metadata: more ? { page_key: offsetPageKey(offset + n) } : {} };
  }
}

/**
 * An end user's own end-user blocks, through its session (docs/end-user-sessions.md): the alias may route to several
 * agents, the session names one. Another end user's session is absent (404), so are its blocks.
 */
@Controller('v2/agent_aliases/:alias_key/end_user_sessions')
export class EndUserMemoryController {
  constructor(
    private readonly endUsers: EndUserSessions,
    private readonly memory: AgentMemory,
  ) {}

  @Get(':session_key/memory')
  @Policy('alias.end_user')
  async memoryOf(@Param('alias_key') aliasKey: string, @Param('session_key') key: string, @Caller() caller: Principal) {
    const { agentKey, sessionKey } = await this.endUsers.own(aliasKey, endUserCaller(caller), key);
    return this.memory.endUserBlocks(agentKey, sessionKey);
  }
}
