import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CommandContext } from '@lib/platform';
import { A2aServer } from './a2a-server';
import { Ctx } from '../http/command-context';
import { BodyLimit } from '../http/body-limit';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';

/**
 * The agent-to-agent protocol per agent (docs/a2a.md) under `/v2/agents/{agent_key}/a2a`: the agent cards (v0.3 at
 * `.well-known/agent-card.json`, v1 at `.well-known/a2a/v1/agent-card.json`) and the HTTP+JSON operations of v1
 * (`message:send`, `message:stream`, `tasks`, `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`) and of
 * v0.3 (the same under `v1/`). The service authenticates and authorizes each call like the agent's session
 * routes; the official SDK speaks the protocol.
 */
@Controller('v2/agents/:agent_key/a2a')
export class A2aController {
  constructor(private readonly a2a: A2aServer) {}

  private base(req: Request, agentKey: string): string {
    return `${req.protocol}://${req.get('host')}/v2/agents/${encodeURIComponent(agentKey)}/a2a`;
  }

  /** Forwards to the SDK with the path below the agent's A2A base. */
  private forward(agentKey: string, kind: 'card' | 'card-v1' | 'rest', req: Request, res: Response, ctx: CommandContext) {
    const prefix = `/v2/agents/${encodeURIComponent(agentKey)}/a2a`;
    const original = req.originalUrl;
    req.url = original.startsWith(prefix) ? original.slice(prefix.length) || '/' : req.url;
    if (kind !== 'rest') req.url = '/';
    return this.a2a.handle(agentKey, this.base(req, agentKey), kind, req, res, ctx);
  }

  @Get('.well-known/agent-card.json')
  @Policy('agent.session_read')
  card(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'card', req, res, ctx);
  }

  @Get('.well-known/a2a/v1/agent-card.json')
  @Policy('agent.session_read')
  cardV1(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'card-v1', req, res, ctx);
  }

  @OpenApi({ freeBody: true, status: 200 })
  @Post('message\\:send')
  @BodyLimit(50) // a message's parts, files included
  @Policy('agent.use')
  send(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, stream: true, status: 200 })
  @Post('message\\:stream')
  @BodyLimit(50) // a message's parts, files included
  @Policy('agent.use')
  stream(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @Get('tasks')
  @Policy('agent.use')
  tasks(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @Get('tasks/:task_id')
  @Policy('agent.use')
  task(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, status: 200 })
  @Post('tasks/:task_id\\:cancel')
  @Policy('agent.use')
  cancel(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, stream: true, status: 200 })
  @Post('tasks/:task_id\\:subscribe')
  @Policy('agent.use')
  subscribePost(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ stream: true })
  @Get('tasks/:task_id\\:subscribe')
  @Policy('agent.use')
  subscribe(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, status: 200 })
  @Post('v1/message\\:send')
  @BodyLimit(50) // a message's parts, files included
  @Policy('agent.use')
  sendV03(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, stream: true, status: 200 })
  @Post('v1/message\\:stream')
  @BodyLimit(50) // a message's parts, files included
  @Policy('agent.use')
  streamV03(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @Get('v1/tasks/:task_id')
  @Policy('agent.use')
  taskV03(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, status: 200 })
  @Post('v1/tasks/:task_id\\:cancel')
  @Policy('agent.use')
  cancelV03(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ freeBody: true, stream: true, status: 200 })
  @Post('v1/tasks/:task_id\\:subscribe')
  @Policy('agent.use')
  subscribeV03Post(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }

  @OpenApi({ stream: true })
  @Get('v1/tasks/:task_id\\:subscribe')
  @Policy('agent.use')
  subscribeV03(@Param('agent_key') agentKey: string, @Req() req: Request, @Res() res: Response, @Ctx() ctx: CommandContext) {
    return this.forward(agentKey, 'rest', req, res, ctx);
  }
}
