import { SetMetadata } from '@nestjs/common';
import type { PolicyName } from '@lib/auth';

export const POLICY = 'route:policy';

/**
 * The policy a route is guarded by, named from the one policy table (`POLICIES` in libs/auth). Every route
 * must carry one: the guard refuses a route without it, and the route × role test fails on it.
 */
export const Policy = (name: PolicyName) => SetMetadata(POLICY, name);
