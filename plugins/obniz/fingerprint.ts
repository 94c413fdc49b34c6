// Fingerprints of installs: 53 bits of two 32-bit FNV-style hashes over the JSON
// text, so the manager keeps a number per device instead of its entry (~325 B)
// or its parsed install, and compares a million devices without parsing any. A
// fingerprint that differs is only a candidate change: the entry is then read
// and compared in full (values.ts sameInstall), so a collision could at worst
// hide a change (odds 2⁻⁵³ a change) and never invent one.

/** The fingerprint of text[start, end). */
export function fingerprint(text: string, start = 0, end = text.length): number {
  let a = 0x811c9dc5;
  let b = 0x2f8a1f3d;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

const HEAD = '{"install":';
const TAIL = /,"instanceName":"[^"\\]*","updatedMillisecond":\d+\}$/y;

/**
 * The fingerprint of the install in a distribution-list entry as coord and
 * obniz-app-sdk's manager write it, {"install":…,"instanceName":"…","updatedMillisecond":…}
 * (the install's text taken as it is); undefined for an entry of another shape
 * (the SDK's Lua re-encodes moved entries in another key order).
 */
export function installFingerprint(entry: string): number | undefined {
  if (!entry.startsWith(HEAD)) return undefined;
  // the last one is the entry's own: one inside the install would be followed by the install's rest
  const at = entry.lastIndexOf(',"instanceName":');
  if (at <= HEAD.length) return undefined;
  TAIL.lastIndex = at;
  return TAIL.test(entry) ? fingerprint(entry, HEAD.length, at) : undefined;
}

/** A list's fingerprint, from its devices' fingerprints in order. */
export function listFingerprint(fingerprints: readonly number[]): number {
  let a = 0x811c9dc5;
  let b = 0x2f8a1f3d;
  for (const f of fingerprints) {
    const hi = Math.floor(f / 0x200000);
    a = Math.imul(a ^ hi, 0x01000193);
    b = Math.imul(b ^ (f % 0x200000), 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}
