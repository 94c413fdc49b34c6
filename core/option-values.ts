// A command's parsed options (PluginCommand.run's `options`) hold what the
// option parser made of the text: "12" becomes 12, a repeated option an
// array, a flag true. These read them back the way the user typed them.

/**
 * One option value as text (a repeated option keeps the last; absent or false:
 * undefined). A plugin command's `options` hold what the option parser made of
 * the command line ("12" becomes 12); this reads a value back as it was typed.
 * Exported as `optionText`.
 *
 * @example
 * // coord cron run-now --job nightly --timeout 30
 * async run(options) {
 *   const job = optionText(options.job); // 'nightly'
 *   const timeout = Number(optionText(options.timeout) ?? '60'); // 30
 * }
 */
export function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (Array.isArray(value)) return text(value.at(-1));
  return String(value);
}

/**
 * A repeatable option's values as text: none, one or many (absent or false:
 * []). Exported as `optionList`.
 *
 * @example
 * // coord cron status --job nightly --job hourly
 * async run(options) {
 *   const jobs = optionList(options.job); // ['nightly', 'hourly']
 * }
 */
export function list(value: unknown): string[] {
  if (value === undefined || value === null || value === false) return [];
  return [value].flat().map(String);
}
