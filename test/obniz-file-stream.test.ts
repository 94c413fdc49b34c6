// The devices file read a slice at a time (sources/file.ts read()): the same
// list as reading it whole, across chunk boundaries, and the same errors,
// line:column included, for a bad list.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../core/clock.ts';
import { memoryLogger } from '../core/logger.ts';
import { pluginConfig } from '../conformance/scenario-context.ts';
import type { ObnizConfig } from '../plugins/obniz/config.ts';
import { toDeviceList } from '../plugins/obniz/device-list.ts';
import plugin from '../plugins/obniz/index.ts';
import { CHUNK, eachJsonItem, fileSource } from '../plugins/obniz/sources/file.ts';

const dir = mkdtempSync(join(tmpdir(), 'obniz-stream-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const config = pluginConfig(plugin, { devices: 'x.json' }) as unknown as ObnizConfig;
let n = 0;
function fileOf(text: string): string {
  const path = join(dir, `list-${n++}.json`);
  writeFileSync(path, text);
  return path;
}
const sourceOf = (path: string) => fileSource(path, { config, logger: memoryLogger(), clock: systemClock });

t.test('eachJsonItem: the items JSON.parse gives for a JSON array, false for any other text', async (t) => {
  const texts = [
    '[]', ' [ ]\n', '[1]', '[1,2]', '[ "a" , "b" ]\n', '[[1,2],[3]]', '[1,\n2]', '["a,]\\"[{", {"x":[1,{"y":"]}"}]}, "\\\\"]',
    '[1,]', '[,1]', '[1 2]', '[1}', '[{]}', '[{"a":[1}]]', '[1] x', '[1]]', '[', '[1', '["a', '', '"str"', '{"devices":[]}',
    '\uFEFF[1]', '[tru]', '[1]{', '[1,,2]', '[\u00a01]', '[{"id":"x"} {"id":"y"}]',
    // a quote first in the second slice read, after 1 to 4 backslashes at the end of the first
    ...[1, 2, 3, 4].map((k) => `["${'a'.repeat(CHUNK - 2 - k)}${'\\'.repeat(k)}"${k % 2 ? 'b"' : ''}]`),
    // a string over four slices
    `["${'a'.repeat(4 * CHUNK)}",1]`,
  ];
  for (const text of texts) {
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch {
      whole = undefined;
    }
    const items: unknown[] = [];
    const streamed = await eachJsonItem(fileOf(text), (item) => items.push(item));
    t.equal(streamed, Array.isArray(whole), `${JSON.stringify(text.slice(0, 40))}: ${Array.isArray(whole) ? 'an array' : 'not one'}`);
    if (streamed) t.same(items, whole);
  }
});

t.test('read(): the list as read whole, across chunk boundaries (a 2.5 MB file)', async (t) => {
  const devices = Array.from({ length: 12_000 }, (_, i) => ({
    id: `${String(i).padStart(8, '0').replace(/^(\d{4})/, '$1-')}`,
    hardware: 'blewifi_gw2',
    configs: JSON.stringify({ label: `部屋 ${i} "quoted" [x] {y}`, n: i }),
    user: { name: `ü\\ser,${i}]` },
  }));
  const source = sourceOf(fileOf(JSON.stringify(devices)));
  t.same(await source.read!(), toDeviceList(await source.list()));
  const pretty = sourceOf(fileOf(JSON.stringify(devices, null, 2)));
  t.same(await pretty.read!(), toDeviceList(await pretty.list()), 'indented');
  t.equal((await pretty.read!()).ids.length, 12_000);
  // runs of backslashes and quotes in strings, over slice boundaries (64 KiB) wherever they fall
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const escapes = Array.from({ length: 400 }, (_, i) => ({ id: `e-${i}`, note: Array.from({ length: 1000 }, () => '\\"a,]}'[Math.floor(random() * 6)]).join('') }));
  const escaped = sourceOf(fileOf(JSON.stringify(escapes)));
  t.same(await escaped.read!(), toDeviceList(await escaped.list()), 'backslashes and quotes across slices');
  t.equal((await escaped.read!()).ids.length, 400);
  const yaml = sourceOf(fileOf('devices:\n  - id: y-1\n  - y-2\n'));
  t.same(await yaml.read!(), toDeviceList([{ id: 'y-1', hardware: 'unknown', configs: '{}' }, { id: 'y-2', hardware: 'unknown', configs: '{}' }]), 'YAML: read whole');
  const wrapped = sourceOf(fileOf('{"devices": ["w-1"]}'));
  t.same((await wrapped.read!()).ids, ['w-1'], '{"devices": [...]}: read whole');
});

t.test('read(): a bad list is the same error as read whole, line:column for a syntax error in the middle', async (t) => {
  const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: `d-${i}`, configs: { i } }));
  lines[15_000] = '{"id": "d-15000" "configs": {"i": 15000}}';
  const broken = sourceOf(fileOf(`[\n${lines.join(',\n')}\n]\n`));
  await t.rejects(broken.read!(), { message: /^devices file .*:15002:\d+: cannot parse: /, code: 'COORD_ERR_OBNIZ_DEVICE_LIST_PARSE' });
  t.equal(await broken.read!().catch((e: Error) => e.message), await broken.list().catch((e: Error) => e.message), 'as read whole');
  const both = [...lines];
  both[3] = '{"id": 7}';
  await t.rejects(sourceOf(fileOf(`[\n${both.join(',\n')}\n]`)).read!(), { message: /:15002:\d+: cannot parse: /, code: 'COORD_ERR_OBNIZ_DEVICE_LIST_PARSE' }, 'a syntax error after a bad device is the one named, as read whole');
  const good = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: `d-${i}` }));
  good[3] = '{"id": 7}';
  const badDevice = sourceOf(fileOf(`[${good.join(',')}]`));
  await t.rejects(badDevice.read!(), { message: `devices file ${join(dir, `list-${n - 1}.json`)}: [3].id: expected an obniz id (NNNN-NNNN) or an id of 1 to 64 letters, digits, '.', '_' or '-', got number 7` });
  await t.rejects(badDevice.list(), { message: `devices file ${join(dir, `list-${n - 1}.json`)}: [3].id: expected an obniz id (NNNN-NNNN) or an id of 1 to 64 letters, digits, '.', '_' or '-', got number 7` }, 'as read whole');
  await t.rejects(sourceOf(fileOf('["a", "b", "a"]')).read!(), { message: /: \[2\]\.id: "a" is listed twice$/, code: 'COORD_ERR_OBNIZ_DEVICE_LISTED_TWICE' });
  await t.rejects(sourceOf(join(dir, 'none.json')).read!(), { message: /: no such file$/, code: 'COORD_ERR_OBNIZ_DEVICE_LIST_FILE' });
  await t.rejects(sourceOf(dir).read!(), { message: /: it is a directory$/ });
});

t.test('read(): a compact device in shape keeps its own text (escapes, numbers as written); any other is JSON.stringify of the device', async (t) => {
  const own = '{"id":"c-1","hardware":"x","configs":"{}","note":"caf\\u00e9","n":1.50}';
  const spaced = '{"id":"c-2", "hardware":"x","configs":"{}"}';
  const shaped = '{"id":"c-3","configs":{"a":1}}';
  const list = await sourceOf(fileOf(`[${own},${spaced} ,${shaped}]`)).read!();
  t.same(list.texts, [own, JSON.stringify(JSON.parse(spaced)), JSON.stringify({ id: 'c-3', configs: '{"a":1}', hardware: 'unknown' })]);
  t.same(JSON.parse(list.texts[0]!), JSON.parse(own), 'the same value');
  const again = await sourceOf(fileOf(`[${own}]`)).read!();
  t.equal(again.fingerprints[0], list.fingerprints[0], 'fingerprinted as written, in place or kept');
});
