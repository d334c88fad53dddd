import { DomainError } from '@lib/platform/kernel';
import { aliasPolicyProblem, AliasPolicy } from './alias';
import { aliasReachable, checkEndUserMetadata, shownEndUserKey, storedEndUserKey } from './alias-end-users';

const policy = (end_user_metadata?: string[]): AliasPolicy => ({ type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a' } }], ...(end_user_metadata ? { end_user_metadata } : {}) });

describe('end users through an alias', () => {
  it('reaches an alias only when every agent it routes to is usable', () => {
    expect(aliasReachable(['a', 'b'], ['a', 'b', 'c'])).toBe(true);
    expect(aliasReachable(['a', 'b'], ['a'])).toBe(false);
    expect(aliasReachable(['a'], '*')).toBe(true);
    expect(aliasReachable([], [])).toBe(false);
  });

  it('takes only the metadata the policy declares; end_user is the service’s', () => {
    expect(() => checkEndUserMetadata('x', policy(['locale']), { locale: 'fr', end_user: 'ignored' })).not.toThrow();
    let refused: unknown;
    try {
      checkEndUserMetadata('x', policy(['locale']), { tier: 'gold', locale: 'fr' });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).details.fieldErrors).toEqual({ 'metadata.tier': expect.any(String) });
    expect(() => checkEndUserMetadata('x', policy(), { tier: 'gold' })).toThrow(/lets end users set none/);
  });

  it('checks the declaration with the policy', () => {
    expect(aliasPolicyProblem(policy(['locale', 'tier']))).toBeUndefined();
    for (const bad of [['end_user'], ['a', 'a'], ['has space'], 'locale', Array.from({ length: 51 }, (_, i) => `f${i}`)]) expect(aliasPolicyProblem({ ...policy(), end_user_metadata: bad })?.[0]).toBe('policy.end_user_metadata');
  });

  it('gives each owner its own keys, shown as given', () => {
    const alice = storedEndUserKey('app_1/alice', 'chat');
    const bob = storedEndUserKey('app_1/bob', 'chat');
    expect(alice).not.toBe(bob);
    expect(alice).toMatch(/^eu-[0-9a-f]{16}-chat$/);
    expect(shownEndUserKey('app_1/alice', alice)).toBe('chat');
    // Another owner's stored key, or one stored before namespacing, is shown as it is.
    expect(shownEndUserKey('app_1/alice', bob)).toBe(bob);
    expect(shownEndUserKey('app_1/alice', 'legacy')).toBe('legacy');
  });
});
