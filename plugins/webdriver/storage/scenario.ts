// Conformance scenario for recordings: the node's announcement and the
// storage role's writes, through the same functions they call (no browser,
// no folder needed): a provider registers, two recordings are announced, one
// is indexed and later deleted by the limits, disk metrics are written.
import type { ConformanceScenario } from '../../../entries/plugin.ts';
import type { WebDriverConfig } from '../config.ts';
import type { Ctx } from '../context.ts';
import type { WebDriverKeys } from '../contract.ts';
import { announceRecording } from './files.ts';
import { announceProvider, forgetRecording, writeDiskMetrics } from './writes.ts';

const STORAGE = 'st-1';
const ids = (n: number) => `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`;

export const storageScenario: ConformanceScenario<WebDriverConfig, WebDriverKeys> = {
  name: 'recordings: a node announces finished files, a storage provider registers, indexes one, deletes one by its limits, writes disk metrics',
  expects: ['storageHost', 'storageProviders', 'storagePending', 'sessionStorage', 'diskTotal', 'diskUsed'],
  async run(ctx) {
    const c = ctx as Ctx;
    await announceProvider(c, STORAGE, 'p0a1b2c3', '127.0.0.1:40100', c.clock.now());
    const recording = (n: number) => ({ sessionId: ids(n), file: `${ids(n)}.mp4`, bytes: 1000 * n, startedAt: new Date(c.clock.now() - 6000).toISOString(), endedAt: new Date(c.clock.now()).toISOString() });
    for (const n of [1, 2, 3]) await announceRecording(c, STORAGE, recording(n));
    // the provider takes the oldest announcement; the others wait in the pending list
    await c.backend.send(['RPOP', c.keys.storagePending({ storageId: STORAGE })]);
    await forgetRecording(c, STORAGE, ids(1)); // deleted by the size limit
    await writeDiskMetrics(c, STORAGE, 10 * 1024 ** 3, 5000);
  },
};
