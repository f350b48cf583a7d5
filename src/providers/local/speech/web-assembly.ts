/**
 * Typed access to the global `WebAssembly` object. The project compiles with lib ES2023 and
 * @types/node 20, neither of which declares it, and a global declaration here would leak into every
 * other folder; so this file declares only what the speech engine uses and nothing global.
 */

/** A compiled module; opaque to us, only ever handed back to `instantiate`. */
export interface WebAssemblyModule {
  readonly compiledModuleBrand?: never;
}

export interface WebAssemblyMemory {
  readonly buffer: ArrayBuffer;
}

export interface WebAssemblyInstance {
  readonly exports: Readonly<Record<string, unknown>>;
}

export type WebAssemblyImports = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

interface WebAssemblyNamespace {
  compile(bytes: Uint8Array): Promise<WebAssemblyModule>;
  instantiate(module: WebAssemblyModule, imports: WebAssemblyImports): Promise<WebAssemblyInstance>;
  readonly Memory: abstract new (...parameters: never[]) => WebAssemblyMemory;
}

export const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyNamespace }).WebAssembly;
