// The manager's id table (plugins/obniz/id-table.ts) against a Map doing the
// same: sets, adds, replacements and deletions in a random order, through many
// growths, with ids that collide in the table's cells (a long run of probes,
// where a deletion must move the later ids back, not cut the run).
import t from 'tap';
import { IdTable } from '../plugins/obniz/id-table.ts';

/** A deterministic generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

t.test('agrees with a Map over 200,000 random operations', async (t) => {
  const next = random(7);
  // values index `keys`, as the manager's slots index its ids
  const keys: string[] = [];
  const table = new IdTable((value) => keys[value]!);
  const model = new Map<string, number>();
  const pool = Array.from({ length: 20_000 }, (_, i) => `${String(i % 10_000).padStart(4, '0')}-${String(Math.floor(i / 7)).padStart(4, '0')}`);
  let disagreements = 0;
  for (let step = 0; step < 200_000; step++) {
    const id = pool[Math.floor(next() * pool.length)]!;
    const op = next();
    if (op < 0.4) {
      keys.push(id);
      table.set(id, keys.length - 1);
      model.set(id, keys.length - 1);
    } else if (op < 0.6) {
      keys.push(id);
      const added = table.add(id, keys.length - 1);
      if (added !== !model.has(id)) disagreements++;
      if (!model.has(id)) model.set(id, keys.length - 1);
    } else if (op < 0.85) {
      if (table.delete(id) !== model.delete(id)) disagreements++;
    } else if (table.get(id) !== (model.get(id) ?? -1)) disagreements++;
  }
  t.equal(disagreements, 0, 'every get, add and delete answered as the Map did');
  t.equal(table.size, model.size, 'the same size');
  t.same(pool.filter((id) => table.get(id) !== (model.get(id) ?? -1)), [], 'every id of the pool looked up at the end');
});

t.test('every third of 400 ids deleted: the rest are found where they were', async (t) => {
  const keys = Array.from({ length: 400 }, (_, i) => `id-${i}`);
  const table = new IdTable((value) => keys[value]!);
  keys.forEach((id, i) => table.set(id, i));
  for (let i = 0; i < keys.length; i += 3) t.ok(table.delete(keys[i]!), `id-${i} deleted`);
  const wrong = keys.filter((id, i) => table.get(id) !== (i % 3 === 0 ? -1 : i));
  t.same(wrong, [], 'the deleted ids are gone and every other is found at its value');
  t.equal(table.size, keys.length - Math.ceil(keys.length / 3));
  t.notOk(table.delete('id-0'), 'deleting an id not there says so');
  t.equal(table.get('no such id'), -1);
});
