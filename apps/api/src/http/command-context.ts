import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { CommandContext } from '@lib/platform';

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/** The command context of the current request: actor, request id, a command id for idempotent retries, and its time (the clock's). */
export const Ctx = createParamDecorator((_: unknown, context: ExecutionContext): CommandContext => {
  const req = context.switchToHttp().getRequest<Request>();
  const key = req.header('idempotency-key');
  return {
    actor: req.actor ?? { type: 'system', id: 'anonymous' },
    requestId: req.requestId,
    commandId: key && IDEMPOTENCY_KEY.test(key) ? `idem:${req.actor?.id}:${key}` : req.requestId,
    now: req.receivedAt,
  };
});
