import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Replays } from '@lib/agents';
import type { CommandContext } from '@lib/platform';
import { Ctx } from '../http/command-context';
import { Policy } from '../http/policy';
import { validateBody } from '../http/validation';
import { OpenApi } from '../openapi/openapi.decorator';
import { ReplayDto } from './replays.dto';

/**
 * Replays of a session (docs/replay.md). A replay shows the original's events (answers, tool calls and their arguments)
 * and creates a session of the agent: starting one is `agent.develop` (a developer's regression check; developers use
 * and view the agent too), reading a replay's diff `agent.view`, as reading events is. An `agent.use` caller, who may
 * not list another session's events, may not read them through a replay either. End users' tokens reach neither.
 */
@Controller('v2/agents/:agent_key/sessions/:session_key/replay')
export class ReplaysController {
  constructor(private readonly replays: Replays) {}

  @OpenApi({ body: ReplayDto, status: 201, statuses: [409] })
  @Post()
  @Policy('agent.develop')
  async replay(@Param('agent_key') agentKey: string, @Param('session_key') sessionKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(ReplayDto, body);
    const result = await this.replays.replay(agentKey, sessionKey, { agentRevision: dto.agent_revision ?? 'current', mode: dto.mode ?? 'recorded', fromEventId: dto.from_event_id, untilEventId: dto.until_event_id, allowSideEffects: dto.allow_side_effects ?? false }, ctx);
    res.status(201);
    return result;
  }

  /** The diff of a replay session against its original, recomputed from both streams. */
  @Get()
  @Policy('agent.view')
  async diff(@Param('agent_key') agentKey: string, @Param('session_key') replayKey: string) {
    const diff = await this.replays.diff(agentKey, replayKey);
    return { session_key: replayKey, diff };
  }
}
