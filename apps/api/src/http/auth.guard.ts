import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { Authenticator, capabilitiesFor, CorpusSource, decide, POLICIES, PolicyName, PolicyRule, Principal } from '@lib/auth';
import { corpusNotFound } from '@lib/corpora';
import { DomainError, notFound, ServiceConfig } from '@lib/platform';
import { AuthFailures, consumeOr429, rateLimited } from './auth-failures';
import { BODY_LIMIT } from './body-limit';
import { POLICY } from './policy';
import { RequestBodies } from './request-body';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export const unauthenticated = (): DomainError =>
  new DomainError('unauthenticated', 'auth.unauthenticated', 'Unauthorized: send a valid API key in x-api-key or an OAuth token in Authorization: Bearer');

const forbidden = (): DomainError => new DomainError('forbidden', 'auth.forbidden', 'Forbidden: your roles do not allow this operation');

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
 * The one guard: finds the route's policy, authenticates the caller from its headers (API key or bearer
 * token), applies the rate limits per credential and per owner, decides, then reads the body within the route's
 * bound (`@BodyLimit`; a policy that finds its corpora in the body decides after reading it). Nothing
 * of a body is read before its sender is known, except on public routes, within small limits. Missing,
 * unknown, disabled or expired credentials all get the same 401; repeated failures from one address get 429
 * (except for credentials that already worked from there); a caller without permission 403, or 404 for a
 * corpus it may not see.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly perCredential: RateLimiterAbstract;
  private readonly perOwner: RateLimiterAbstract;

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly failures: AuthFailures,
    private readonly bodies: RequestBodies,
    config: ServiceConfig,
    /** Makes limiters that count in the store every API process shares. */
    limits: (name: string, points: number, durationSeconds: number) => RateLimiterAbstract,
  ) {
    this.perCredential = limits('credential', config.rateLimitPerMinute, 60);
    this.perOwner = limits('owner', config.rateLimitPerOwnerPerMinute, 60);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const name = this.reflector.get<PolicyName | undefined>(POLICY, context.getHandler());
    if (!name || !(name in POLICIES)) throw new Error(`Route ${context.getClass().name}.${context.getHandler().name} declares no policy`);
    const rule = POLICIES[name];
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    if (rule.kind === 'public') {
      await this.bodies.read(req, res, false);
      return true;
    }
    const principal = await this.authenticate(req);
    req.principal = principal;
    req.actor = principal.actor;
    await consumeOr429(this.perCredential, principal.bucket, 'requests for this credential');
    await consumeOr429(this.perOwner, principal.ownerBucket, 'requests for the user or app client behind this credential');
    const jsonBytes = this.reflector.get<number | undefined>(BODY_LIMIT, context.getHandler());
    // The caller's right to the route is decided before its body is read, unless the policy finds its corpora in
    // the body (the multi-corpus query, whose bound is the default's): a key that may not write a corpus has no
    // 50 MB document parsed for it.
    const bodyNamesCorpora = rule.kind === 'corpus' && rule.corpora.startsWith('body:');
    if (!bodyNamesCorpora) this.authorize(req, principal, name);
    await this.bodies.read(req, res, true, jsonBytes);
    if (bodyNamesCorpora) this.authorize(req, principal, name);
    return true;
  }

  private authorize(req: Request, principal: Principal, name: PolicyName): void {
    const rule: PolicyRule = POLICIES[name];
    const isDataKey = principal.keyType !== undefined && principal.keyType !== 'personal';
    const agentKey = rule.kind === 'agent' && typeof req.params.agent_key === 'string' ? req.params.agent_key : undefined;
    // An end user's token reaches only the end-user routes: elsewhere it is decided as a credential without rights.
    const caps = capabilitiesFor(name, principal.caps, principal.endUser !== undefined);
    const decision = decide(rule, caps, rule.kind === 'corpus' ? corpusKeysOf(req, rule.corpora) : [], isDataKey, agentKey);
    if (decision.outcome === 'hidden') throw corpusNotFound(decision.corpusKey);
    if (decision.outcome === 'hidden_agent') throw notFound('agent.not_found', `Agent "${decision.agentKey}" does not exist`, decision.agentKey);
    if (decision.outcome === 'forbidden') throw forbidden();
  }

  private async authenticate(req: Request): Promise<Principal> {
    const address = req.ip ?? 'unknown';
    const blocked = await this.failures.blockedFor(address);
    const key = req.header('x-api-key');
    const authorization = req.header('authorization');
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    const principal = key ? await this.authenticator.apiKey(key) : bearer ? await this.authenticator.bearer(bearer) : undefined;
    if (!principal) {
      if (blocked) throw rateLimited(blocked, 'failed authentications from this address');
      // A request without any credential guesses nothing: only wrong credentials count.
      if (key || bearer) await this.failures.failed(address);
      throw unauthenticated();
    }
    this.failures.admit(address, principal.bucket, blocked, 'failed authentications from this address');
    return principal;
  }
}
