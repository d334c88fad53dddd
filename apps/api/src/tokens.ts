/** Injection token of the composed adapters (apps/infrastructure). */
export const INFRASTRUCTURE = Symbol('Infrastructure');
