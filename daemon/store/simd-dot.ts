/**
 * Dot products of one int16 query with many int8 rows, as a WebAssembly SIMD kernel whose bytes are
 * written out here (no toolchain): `dots(q, rows, n, stride, out)` reads the query at byte `q`
 * (`stride` int16s), `n` rows of `stride` int8s from byte `rows` on, and writes one i32 per row from
 * byte `out` on. `stride` is a multiple of 16; `q` and `rows` are 16-byte aligned. Memory is
 * imported (env.memory), so the caller owns and grows it.
 */

/** Unsigned LEB128. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** A section: id, byte length, contents. */
function section(id: number, bytes: number[]): number[] {
  return [id, ...leb(bytes.length), ...bytes];
}

const name = (s: string) => [...leb(s.length), ...Buffer.from(s)];

const I32 = 0x7f;
const V128 = 0x7b;
// Parameters, then locals, by index.
const Q = 0, ROWS = 1, N = 2, STRIDE = 3, OUT = 4, END = 5, K = 6, ACC = 7, V = 8;

const get = (i: number) => [0x20, i]; // local.get
const set = (i: number) => [0x21, i]; // local.set
const i32Const = (n: number) => [0x41, ...leb(n)]; // i32.const (small non-negative only)
const simd = (op: number, ...imm: number[]) => [0xfd, ...leb(op), ...imm];
const v128Load = (offset: number) => simd(0x00, 4, ...leb(offset)); // v128.load, align 2^4, offset
const extendLow = simd(135); // i16x8.extend_low_i8x16_s
const extendHigh = simd(136); // i16x8.extend_high_i8x16_s
const dot = simd(186); // i32x4.dot_i16x8_s: pairwise products of i16 lanes summed into i32 lanes
const addI32x4 = simd(174); // i32x4.add
const lane = (l: number) => simd(27, l); // i32x4.extract_lane l
const I32_ADD = 0x6a, I32_SUB = 0x6b, I32_EQZ = 0x45, I32_LT_U = 0x49;
const BLOCK = 0x02, LOOP = 0x03, BR = 0x0c, BR_IF = 0x0d, END_OP = 0x0b, VOID = 0x40;

// prettier-ignore
const body = [
  BLOCK, VOID,                                   // $done
    LOOP, VOID,                                  // $row: one row per pass, `rows` advancing
      ...get(N), I32_EQZ, BR_IF, 1,              //   if n == 0 break $done
      ...simd(0x0c, ...new Array(16).fill(0)), ...set(ACC), // v128.const 0 → acc
      ...get(ROWS), ...get(STRIDE), I32_ADD, ...set(END),   // end = rows + stride
      ...get(Q), ...set(K),                      //   k = q
      LOOP, VOID,                                //   $chunk: 16 int8 lanes of the row per pass
        ...get(ROWS), ...v128Load(0), ...set(V), //     v = 16 × i8 at rows
        ...get(ACC),
        ...get(V), ...extendLow, ...get(K), ...v128Load(0), ...dot, ...addI32x4,   // acc += dot(low 8 of v, q[k..k+8])
        ...get(V), ...extendHigh, ...get(K), ...v128Load(16), ...dot, ...addI32x4, // acc += dot(high 8 of v, q[k+8..k+16])
        ...set(ACC),
        ...get(K), ...i32Const(32), I32_ADD, ...set(K),        // k += 16 int16s
        ...get(ROWS), ...i32Const(16), I32_ADD, ...set(ROWS),  // rows += 16 int8s
        ...get(ROWS), ...get(END), I32_LT_U, BR_IF, 0,         // while rows < end
      END_OP,
      ...get(OUT),                               //   out[i] = sum of acc's four lanes
      ...get(ACC), ...lane(0), ...get(ACC), ...lane(1), I32_ADD,
      ...get(ACC), ...lane(2), I32_ADD, ...get(ACC), ...lane(3), I32_ADD,
      0x36, 2, 0,                                //   i32.store align 2^2, offset 0
      ...get(OUT), ...i32Const(4), I32_ADD, ...set(OUT),       // out += 4
      ...get(N), ...i32Const(1), I32_SUB, ...set(N),           // n -= 1
      BR, 0,                                     //   continue $row
    END_OP,
  END_OP,
  END_OP,                                        // end of function
];
const locals = [2, 2, I32, 2, V128]; // two local groups: 2 × i32 (end, k), 2 × v128 (acc, v)

// prettier-ignore
const bytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,                 // "\0asm", version 1
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),        // type: (i32 × 5) → ()
  ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 0]), // import env.memory, min 0 pages
  ...section(3, [1, 0]),                                          // function 0 has type 0
  ...section(7, [1, ...name("dots"), 0x00, 0]),                   // export function 0 as "dots"
  ...section(10, [1, ...leb(locals.length + body.length), ...locals, ...body]), // code
]);

// A one-instruction SIMD module (v128.const; drop): tells "no SIMD here" from "kernel encoded wrong".
// prettier-ignore
const probe = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 0, 0]),
  ...section(3, [1, 0]),
  ...section(10, [1, 21, 0, ...simd(0x0c, ...new Array(16).fill(0)), 0x1a, END_OP]),
]);

export type Dots = (q: number, rows: number, n: number, stride: number, out: number) => void;

let module: WebAssembly.Module | null | undefined;

/** The kernel over `memory`; a scalar JS one with the same contract where WebAssembly SIMD is unavailable. */
export function dotKernel(memory: WebAssembly.Memory): Dots {
  if (module === undefined) {
    if (!WebAssembly.validate(probe)) module = null;
    else if (!WebAssembly.validate(bytes)) throw new Error("simd-dot: the WebAssembly kernel does not validate");
    else module = new WebAssembly.Module(bytes);
  }
  return module ? (new WebAssembly.Instance(module, { env: { memory } }).exports.dots as Dots) : scalarKernel(memory);
}

/** The same contract in plain JS, for runtimes without WebAssembly SIMD. */
export function scalarKernel(memory: WebAssembly.Memory): Dots {
  return (q, rows, n, stride, out) => {
    const b = memory.buffer;
    const qv = new Int16Array(b, q, stride);
    const rv = new Int8Array(b, rows, n * stride);
    const ov = new Int32Array(b, out, n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let d = 0, base = i * stride; d < stride; d++) s += qv[d] * rv[base + d];
      ov[i] = s;
    }
  };
}
