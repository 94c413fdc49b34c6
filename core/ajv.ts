// One way to make an ajv instance (with the standard formats), shared by the
// config loader and the plugin check so both read schemas the same way.
import type { Ajv, Options } from 'ajv';
import type { FormatsPlugin } from 'ajv-formats';
import type { JsonSchema } from './contract.ts';
import { lazyModule } from './lazy-module.ts';

// ajv itself: a command whose config schema the build compiled does not load it (see config-validator.ts).
const ajvModule = lazyModule<typeof import('ajv')>('ajv');
// ajv-formats is CommonJS: its function is the module itself on Node and Deno,
// but NodeNext types see it under `default`. Loaded for a schema that names a
// format only: most config schemas name none, and a command's start-up saves it.
const formats = lazyModule<FormatsPlugin & { default?: FormatsPlugin }>('ajv-formats');

/** An ajv with coord's defaults; `withFormats: false` leaves out the standard formats (for a schema that names none: see namesFormat). */
export function createAjv(options: Options = {}, withFormats = true): Ajv {
  const ajv = new (ajvModule().Ajv)({ strict: true, strictTypes: false, strictTuples: false, allErrors: true, ...options });
  if (withFormats) (formats().default ?? formats())(ajv);
  return ajv;
}

/** Whether a `format` keyword appears anywhere in `schema` (a property called format is a schema, an object, and does not count). */
export function namesFormat(schema: JsonSchema): boolean {
  return /"format":"/.test(JSON.stringify(schema));
}
