import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { DomainError } from '@lib/platform';

const PUBLIC = 'route:public';
/** Marks a route that needs no credential (health probes). */
export const Public = () => SetMetadata(PUBLIC, true);

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export const unauthenticated = (): DomainError =>
  new DomainError('unauthenticated', 'auth.unauthenticated', 'Unauthorized: a valid API key is required in the x-api-key header');

/**
 * Until users and keys exist (the auth issue), the bootstrap owner key is the one credential accepted.
 * Digests are compared in constant time; every failure gets the same 401.
 */
@Injectable()
export class BootstrapKeyGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(
    private readonly reflector: Reflector,
    bootstrapKey: string,
  ) {
    this.expected = digest(bootstrapKey);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const key = req.header('x-api-key');
    if (!key || !timingSafeEqual(digest(key), this.expected)) throw unauthenticated();
    req.actor = { type: 'api_key', id: 'aky_bootstrap' };
    return true;
  }
}
