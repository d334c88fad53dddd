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
 * Replays of a session (docs/replay.md). A replay reads the original session and creates a session of the agent: the
 * `agent.use` policy grants both (it is among the session read's actions), and end users' tokens reach neither.
 */
@Controller('v2/agents/:agent_key/sessions/:session_key/replay')
export class ReplaysController {
  constructor(private readonly replays: Replays) {}

  @OpenApi({ body: ReplayDto, status: 201, statuses: [409] })
  @Post()
  @Policy('agent.use')
  async replay(@Param('agent_key') agentKey: string, @Param('session_key') sessionKey: string, @Body() body: unknown, @Ctx() ctx: CommandContext, @Res({ passthrough: true }) res: Response) {
    const dto = validateBody(ReplayDto, body);
    const result = await this.replays.replay(agentKey, sessionKey, { agentRevision: dto.agent_revision ?? 'current', mode: dto.mode ?? 'recorded', fromEventId: dto.from_event_id, untilEventId: dto.until_event_id, allowSideEffects: dto.allow_side_effects ?? false }, ctx);
    res.status(201);
    return result;
  }

  /** The diff of a replay session against its original, recomputed from both streams. */
  @Get()
  @Policy('agent.session_read')
  async diff(@Param('agent_key') agentKey: string, @Param('session_key') replayKey: string) {
    const diff = await this.replays.diff(agentKey, replayKey);
    return { session_key: replayKey, diff };
  }
}
