import type { Capability } from '@lib/auth';
import type { Actor } from '@lib/platform';

/**
 * What an actor may do now, as the service would authenticate it (the auth module's `Authenticator` answers it,
 * bound in apps/): an agent's tools act with its identity's roles bounded by its configurers' rights now.
 * `undefined` for the service's own actors (no person's roles bound them); `[]` for one disabled or gone.
 */
export interface CapabilityLookup {
  capabilitiesNow(actor: Actor): Promise<Capability[] | undefined>;
}

export const CAPABILITY_LOOKUP = Symbol('CapabilityLookup');
