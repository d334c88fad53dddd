import { SetMetadata } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import type { PolicyName } from '@lib/auth';

export const POLICY = 'route:policy';

/**
 * The policy a route is guarded by, named from the one policy table (`POLICIES` in libs/auth). Every route
 * must carry one: the guard refuses a route without it, and the route × role test fails on it.
 */
export const Policy = (name: PolicyName) => SetMetadata(POLICY, name);

/** Names of handlers (`Class.method`) that serve a route but declare no policy; start-up refuses them. */
export function routesWithoutPolicy(controllers: Iterable<Function>): string[] {
  const missing: string[] = [];
  for (const cls of controllers) {
    const proto = (cls as { prototype: Record<string, unknown> }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = proto[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      if (!Reflect.getMetadata(POLICY, handler)) missing.push(`${cls.name}.${name}`);
    }
  }
  return missing;
}
