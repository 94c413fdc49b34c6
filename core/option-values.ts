// A command's parsed options (PluginCommand.run's `options`) hold what the
// option parser made of the text: "12" becomes 12, a repeated option an
// array, a flag true. These read them back the way the user typed them.

/** One option value as text (a repeated option keeps the last; absent or false: undefined). */
export function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (Array.isArray(value)) return text(value.at(-1));
  return String(value);
}

/** A repeatable option's values as text. */
export function list(value: unknown): string[] {
  if (value === undefined || value === null || value === false) return [];
  return [value].flat().map(String);
}
