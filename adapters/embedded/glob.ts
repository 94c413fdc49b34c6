// Redis glob patterns (KEYS, SCAN MATCH, PSUBSCRIBE): * ? [abc] [^a] [a-z] and \ escapes.
// Braces and slashes mean nothing special, unlike shell globs.

export function globToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '\\' && i + 1 < pattern.length) out += escape(pattern[++i]!);
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        out += escape(c);
        continue;
      }
      let body = pattern.slice(i + 1, close);
      const negate = body.startsWith('^');
      if (negate) body = body.slice(1);
      const parts = body.replace(/\\(.)/g, '$1').split('');
      let cls = '';
      for (let k = 0; k < parts.length; k++) {
        if (parts[k + 1] === '-' && k + 2 < parts.length) {
          const [a, b] = [parts[k]!, parts[k + 2]!].sort();
          cls += `${escapeClass(a!)}-${escapeClass(b!)}`;
          k += 2;
        } else cls += escapeClass(parts[k]!);
      }
      out += `[${negate ? '^' : ''}${cls}]`;
      i = close;
    } else out += escape(c);
  }
  return new RegExp(`^${out}$`);
}

function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function escapeClass(c: string): string {
  return c.replace(/[\]\\^-]/g, '\\$&');
}
