// One way to make an ajv instance (with the standard formats), shared by the
// config loader and the plugin check so both read schemas the same way.
import { Ajv, type Options } from 'ajv';
import * as formats from 'ajv-formats';
import type { FormatsPlugin } from 'ajv-formats';

// ajv-formats is CommonJS: its function is the module itself on Node and Deno,
// but NodeNext types see it under `default`.
const addFormats = ((formats as unknown as { default?: FormatsPlugin }).default ?? formats) as unknown as FormatsPlugin;

export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ strict: true, strictTypes: false, strictTuples: false, allErrors: true, ...options });
  addFormats(ajv);
  return ajv;
}
