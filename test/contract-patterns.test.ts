// defineContract refuses a key pattern no builder could fill — a stray brace,
// a parameter named twice, a params rule that is not a regular expression —
// with ContractError and a code of its own for each kind of mistake.
import t from 'tap';
import { ContractError, defineContract, type KeySpec } from '../entries/plugin.ts';

function refusal(key: Partial<KeySpec>): ContractError | undefined {
  try {
    defineContract({ plugin: 'p', keys: { k: { pattern: 'k', type: 'string', description: 'a key', ttl: 'none', writers: [], ...key } as KeySpec } });
    return undefined;
  } catch (err) {
    if (err instanceof ContractError) return err;
    throw err;
  }
}

t.test('a stray brace is not a parameter', async (t) => {
  for (const pattern of ['a:{', 'a:{}', 'a:}', 'a:{1x}', 'a:{x']) {
    const err = refusal({ pattern });
    t.equal(err?.code, 'COORD_ERR_CONTRACT_PATTERN', pattern);
    t.match(err?.message, `contract p, key k: pattern "${pattern}" has a { or } that is not a parameter`);
  }
});

t.test('each other mistake has its own code', async (t) => {
  t.equal(refusal({ pattern: 'a:{x}:{x}' })?.code, 'COORD_ERR_CONTRACT_PATTERN', 'a parameter twice');
  t.equal(refusal({ pattern: 'a b' })?.code, 'COORD_ERR_CONTRACT_PATTERN', 'spaces');
  t.equal(refusal({ pattern: '' })?.code, 'COORD_ERR_CONTRACT_PATTERN', 'empty');
  t.equal(refusal({ pattern: '{tag}' })?.code, undefined, '{tag} alone is a parameter');
  t.equal(refusal({ pattern: 'x', type: 'tree' as KeySpec['type'] })?.code, 'COORD_ERR_CONTRACT_KEY_TYPE');
  t.equal(refusal({ pattern: 'x', derivable: true })?.code, 'COORD_ERR_CONTRACT_DERIVABLE');
  t.equal(refusal({ pattern: 'x:{id}', params: { other: '\\d+' } })?.code, 'COORD_ERR_CONTRACT_PARAM', 'params names no parameter');
  t.equal(refusal({ pattern: 'x:{id}', params: { id: '(' } })?.code, 'COORD_ERR_CONTRACT_PARAM', 'params rule is not a regex');
  t.equal(refusal({ pattern: 'job:{name}', params: { name: '[a-z]+' } }), undefined, 'a good key passes');
});
