import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { Authenticator, CorpusSource, decide, POLICIES, PolicyName, Principal } from '@lib/auth';
import { corpusNotFound } from '@lib/corpora';
import { DomainError, ServiceConfig } from '@lib/platform';
import { POLICY } from './policy';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export const unauthenticated = (): DomainError =>
  new DomainError('unauthenticated', 'auth.unauthenticated', 'Unauthorized: send a valid API key in x-api-key or an OAuth token in Authorization: Bearer');

const forbidden = (): DomainError => new DomainError('forbidden', 'auth.forbidden', 'Forbidden: your roles do not allow this operation');

const rateLimited = (res: RateLimiterRes, what: string): DomainError =>
  new DomainError('rate_limited', 'auth.rate_limited', `Too many ${what}; retry after ${Math.ceil(res.msBeforeNext / 1000)} s`, {
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });

/** The corpus keys a request names, from where the route's policy says they are. */
function corpusKeysOf(req: Request, source: CorpusSource): string[] {
  switch (source) {
    case 'path:corpus_key':
      return typeof req.params.corpus_key === 'string' ? [req.params.corpus_key] : [];
    case 'query:corpus_key':
      return typeof req.query.corpus_key === 'string' ? [req.query.corpus_key] : [];
    case 'body:search.corpora[].corpus_key': {
      const corpora = (req.body as { search?: { corpora?: unknown } } | undefined)?.search?.corpora;
      return Array.isArray(corpora) ? corpora.map((c) => (c as { corpus_key?: unknown } | null)?.corpus_key).filter((k): k is string => typeof k === 'string') : [];
    }
  }
}

/**
 * The one guard: finds the route's policy, authenticates the caller (API key or bearer token), applies the
 * per-credential rate limit, and decides. Missing, unknown, disabled or expired credentials all get the same
 * 401; repeated failures from one address get 429; a caller without permission 403, or 404 for a corpus it
 * may not see.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly perCredential: RateLimiterMemory;
  private readonly failures: RateLimiterMemory;

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    config: ServiceConfig,
  ) {
    this.perCredential = new RateLimiterMemory({ points: config.rateLimitPerMinute, duration: 60 });
    this.failures = new RateLimiterMemory({ points: config.authFailuresPerMinute, duration: 60 });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const name = this.reflector.get<PolicyName | undefined>(POLICY, context.getHandler());
    if (!name || !(name in POLICIES)) throw new Error(`Route ${context.getClass().name}.${context.getHandler().name} declares no policy`);
    const rule = POLICIES[name];
    if (rule.kind === 'public') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const principal = await this.authenticate(req);
    req.principal = principal;
    req.actor = principal.actor;
    try {
      await this.perCredential.consume(principal.bucket);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw rateLimited(e, 'requests for this credential');
      throw e;
    }
    const isDataKey = principal.keyType !== undefined && principal.keyType !== 'personal';
    const decision = decide(rule, principal.caps, rule.kind === 'corpus' ? corpusKeysOf(req, rule.corpora) : [], isDataKey);
    if (decision.outcome === 'hidden') throw corpusNotFound(decision.corpusKey);
    if (decision.outcome === 'forbidden') throw forbidden();
    return true;
  }

  private async authenticate(req: Request): Promise<Principal> {
    const address = req.ip ?? 'unknown';
    const seen = await this.failures.get(address);
    if (seen && seen.remainingPoints <= 0) throw rateLimited(seen, 'failed authentications from this address');
    const key = req.header('x-api-key');
    const authorization = req.header('authorization');
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    const principal = key ? await this.authenticator.apiKey(key) : bearer ? await this.authenticator.bearer(bearer) : undefined;
    if (!principal) {
      await this.failures.penalty(address, 1);
      throw unauthenticated();
    }
    return principal;
  }
}
