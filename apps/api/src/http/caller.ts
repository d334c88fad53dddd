import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '@lib/auth';

/** The authenticated caller of the current request (set by the guard; absent only on public routes). */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<Request>().principal;
  if (!principal) throw new Error('@Caller() used on a public route');
  return principal;
});
