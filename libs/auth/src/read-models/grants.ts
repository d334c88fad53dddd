import { Grants, toWireGrants, WireGrants } from '../domain/roles';

/** The fields grants are stored as in every auth read model (`api_roles`, `corpus_roles`, `agent_roles`). */
export const grantFields = (grants: Grants): WireGrants => toWireGrants(grants);
