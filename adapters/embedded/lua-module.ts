// Loads Lua 5.4 compiled to WebAssembly (glue.wasm from the npm package wasmoon,
// pinned exactly in package.json) and gives it the host functions it imports,
// instead of going through wasmoon's JavaScript: that hands out only checking
// wrappers (5-8x the cost of a Lua C API call) and no way to the instance's own
// exports, which the adapter used to catch by patching WebAssembly.instantiate.
// Loaded here, no global is touched and every C function is the instance's own.
//
// What the host gives is what a script may need and no more: the clock, memory
// growth and Lua's error unwinding (setjmp/longjmp), print to stdout. There is no
// file system, shell or environment (Redis's scripts have none either): io.open,
// os.remove and os.execute fail, os.getenv returns nil; os.exit is removed by the
// prelude (lua-prelude.ts), and the host's exit raises an error if reached.
import { readFile } from 'node:fs/promises';
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ModuleLoadError } from '../../core/errors.ts';

// The part of the WebAssembly API used here (its declarations come with the DOM lib, not in this build).
interface WasmTable {
  get(index: number): (...args: number[]) => unknown;
  grow(count: number): number;
  set(index: number, fn: unknown): void;
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
type Exports = Record<string, unknown>;
interface Wasm {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Exports } }>;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Exports };
  RuntimeError: new (message: string) => Error;
}
const WebAssembly = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** The instance's exports the adapter calls, plus the heap views and a way to pass JS functions to Lua. */
export interface LuaModule {
  readonly exports: Exports;
  /** Views of the module's memory, replaced when it grows. */
  readonly heap: { u8: Uint8Array; u32: Uint32Array };
  /** Makes `fn(L) → results` callable from C (a lua_CFunction); returns its table index. */
  addFunction(fn: (L: number) => number): number;
}

/** The glue's file inside the installed wasmoon. */
export function glueWasmPath(): string {
  return createRequire(import.meta.url).resolve('wasmoon/dist/glue.wasm');
}

// Emscripten's errno values (musl's wasm numbering), as the C library expects them.
const ENOSYS = 52;
const EBADF = 8;
const ESPIPE = 70;
/** Emscripten's default ceiling for a growing heap. */
const MAX_HEAP = 2_147_483_648;

/** Compiles and starts the Lua module; throws ModuleLoadError (COORD_ERR_EMBEDDED_LUA_LOAD) if it cannot. */
export async function loadLuaModule(path?: string): Promise<LuaModule> {
  let exports: Exports = {};
  const host = hostFunctions(() => exports);
  try {
    const bytes = await readFile(path ?? glueWasmPath());
    ({ exports } = (await WebAssembly.instantiate(bytes, host.imports)).instance);
  } catch (error) {
    throw new ModuleLoadError(`the embedded backend's Lua engine (wasmoon's glue.wasm) does not load: ${(error as Error).message}`, {
      code: 'COORD_ERR_EMBEDDED_LUA_LOAD',
      cause: error,
    });
  }
  host.refreshHeap();
  // What emscripten's own start-up runs before any call: the stack, then C's static constructors.
  (exports.emscripten_stack_init as () => void)();
  (exports.__wasm_call_ctors as () => void)();
  return { exports, heap: host.heap, addFunction: functionAdder(exports.__indirect_function_table as WasmTable) };
}

/** The imports glue.wasm declares (27 in wasmoon 1.16.0; instantiation names any that is missing). */
function hostFunctions(instanceExports: () => Exports) {
  type CFunction = (...args: number[]) => number;
  const exports = () => instanceExports() as Record<string, CFunction> & { __indirect_function_table: WasmTable };
  const memory = () => instanceExports().memory as WasmMemory;
  const heap = { u8: new Uint8Array(0), u32: new Uint32Array(0) };
  const refreshHeap = () => {
    heap.u8 = new Uint8Array(memory().buffer);
    heap.u32 = new Uint32Array(memory().buffer);
  };
  const i32 = new Int32Array(1);
  const setInt = (pointer: number, value: number) => {
    i32[0] = value;
    heap.u8.set(new Uint8Array(i32.buffer), pointer);
  };
  /** Fills a C `struct tm` (9 ints: sec, min, hour, mday, mon, year-1900, wday, yday, isdst) from a time in seconds. */
  const fillTm = (seconds: bigint | number, pointer: number, utc: boolean) => {
    const date = new Date(Number(seconds) * 1000);
    const get = (name: 'Seconds' | 'Minutes' | 'Hours' | 'Date' | 'Month' | 'FullYear' | 'Day') =>
      (date[`get${utc ? 'UTC' : ''}${name}`] as () => number).call(date);
    const year = get('FullYear');
    const startOfYear = utc ? Date.UTC(year, 0, 1) : new Date(year, 0, 1).getTime();
    const fields = [get('Seconds'), get('Minutes'), get('Hours'), get('Date'), get('Month'), year - 1900, get('Day')];
    fields.push(Math.floor((date.getTime() - startOfYear) / 86_400_000), 0);
    fields.forEach((value, i) => setInt(pointer + i * 4, value));
  };
  const noSyscall = () => -ENOSYS;
  const imports = {
    env: {
      abort: () => {
        throw new WebAssembly.RuntimeError('the embedded Lua engine aborted');
      },
      // Lua's errors are longjmps: emscripten throws Infinity and the invoke_ wrapper that set the jump catches it.
      _emscripten_throw_longjmp: () => {
        throw Number.POSITIVE_INFINITY;
      },
      invoke_vii: (index: number, a: number, b: number) => {
        const { stackSave, stackRestore, setThrew, __indirect_function_table: table } = exports();
        const saved = stackSave();
        try {
          table.get(index)(a, b);
        } catch (error) {
          stackRestore(saved);
          if (error !== Number.POSITIVE_INFINITY) throw error;
          setThrew(1, 0);
        }
      },
      emscripten_resize_heap: (requested: number) => {
        const size = requested >>> 0;
        if (size > MAX_HEAP) return 0;
        const current = memory().buffer.byteLength;
        // As emscripten: grow by 20% (or what was asked, if more), in 64 KiB pages.
        const target = Math.min(MAX_HEAP, Math.max(size, Math.min(current * 1.2, size + 100_663_296)));
        try {
          memory().grow(Math.ceil((target - current) / 65_536));
        } catch {
          return 0;
        }
        refreshHeap();
        return 1;
      },
      emscripten_date_now: () => Date.now(),
      _emscripten_get_now_is_monotonic: () => 1,
      _gmtime_js: (seconds: bigint, pointer: number) => fillTm(seconds, pointer, true),
      _localtime_js: (seconds: bigint, pointer: number) => fillTm(seconds, pointer, false),
      _mktime_js: (pointer: number) => {
        const field = (i: number) => new Int32Array(heap.u8.buffer, pointer + i * 4, 1)[0]!;
        const date = new Date(field(5) + 1900, field(4), field(3), field(2), field(1), field(0));
        if (Number.isNaN(date.getTime())) return -1n;
        const seconds = Math.floor(date.getTime() / 1000);
        fillTm(seconds, pointer, false); // normalised, as C's mktime leaves it (os.time updates its table from it)
        return BigInt(seconds);
      },
      // No time zone names: os.date's %Z is empty (the zone's offset still applies through _localtime_js).
      _tzset_js: () => {},
      // os.date formats nothing: Redis's scripts have no os.date at all.
      strftime: () => 0,
      // No shell: os.execute() answers false, os.execute(command) fails with ENOSYS.
      system: (command: number) => {
        if (command === 0) return 0;
        setInt(exports().__errno_location(), ENOSYS);
        return -1;
      },
      exit: (status: number) => {
        throw new WebAssembly.RuntimeError(`a script called os.exit(${status}), which the embedded backend does not allow`);
      },
      __syscall_openat: noSyscall,
      __syscall_fcntl64: noSyscall,
      __syscall_ioctl: noSyscall,
      __syscall_dup3: noSyscall,
      __syscall_unlinkat: noSyscall,
      __syscall_rmdir: noSyscall,
      __syscall_renameat: noSyscall,
      __syscall_readlinkat: noSyscall,
    },
    wasi_snapshot_preview1: {
      // print and io.write reach the process's stdout (as a script's print reaches redis-server's), stderr likewise.
      fd_write: (fd: number, iov: number, count: number, written: number) => {
        if (fd !== 1 && fd !== 2) return EBADF;
        let total = 0;
        for (let i = 0; i < count; i++) {
          const at = heap.u32[(iov >> 2) + i * 2]!;
          const length = heap.u32[(iov >> 2) + i * 2 + 1]!;
          if (length > 0) writeSync(fd, heap.u8, at, length);
          total += length;
        }
        heap.u32[written >> 2] = total;
        return 0;
      },
      // stdin is empty: io.read() returns nil.
      fd_read: (_fd: number, _iov: number, _count: number, read: number) => {
        heap.u32[read >> 2] = 0;
        return 0;
      },
      fd_close: () => 0,
      fd_seek: () => ESPIPE,
      environ_sizes_get: (count: number, size: number) => {
        heap.u32[count >> 2] = 0;
        heap.u32[size >> 2] = 0;
        return 0;
      },
      environ_get: () => 0,
    },
  };
  return { imports, heap, refreshHeap };
}

/**
 * Puts JS functions in the module's function table so C can call them. A JS
 * function becomes a wasm one by a one-function module that imports and
 * re-exports it with the lua_CFunction type, (i32) → i32 (emscripten's own
 * addFunction does the same where WebAssembly.Function is missing).
 */
function functionAdder(table: WasmTable): (fn: (L: number) => number) => number {
  // prettier-ignore
  const wrapper = new WebAssembly.Module(new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // types: (i32) → i32
    0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import e.f of that type
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export it as f
  ]));
  return (fn) => {
    const wasmFunction = new WebAssembly.Instance(wrapper, { e: { f: fn } }).exports.f;
    const index = table.grow(1);
    table.set(index, wasmFunction);
    return index;
  };
}
