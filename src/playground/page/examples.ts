// The playground's example gallery: each a kernel, its launch, and a check against the host. Each runs
// on both targets: launches with host arrays are awaited (`launcher.async`: WebGPU cannot block), and
// every value is float32 or an int32 (WGSL has no float64: an accumulator starts as float32(0)).

export interface Example {
  readonly name: string;
  readonly title: string;
  readonly code: string;
}

const vectorAdd = `// Vector add: one thread per element.
const add = cuda.jit((a, b, out) => {
  const i = cuda.grid(1);
  if (i < out.length) out[i] = a[i] + b[i];
});

const n = 1000;
const a = Float32Array.from({ length: n }, (_, i) => i);
const b = Float32Array.from({ length: n }, (_, i) => 2 * i);
const out = new Float32Array(n);
const threads = 128;
// awaited: the launch resolves once \`out\` holds the result (the only way on WebGPU, fine everywhere)
await add.configure(Math.ceil(n / threads), threads).async(a, b, out);

console.log(out.subarray(0, 8));
console.log("all equal to the host's:", out.every((x, i) => x === Math.fround(a[i] + b[i])));
`;

const matmul = `// Matrix multiply with shared-memory tiles: each block loads a TILE x TILE tile of A and
// of B, waits at the barrier, and accumulates their product.
const TILE = 16;
const matmul = cuda.jit((A, B, C, n) => {
  const sA = cuda.shared.array(256, float32); // TILE * TILE
  const sB = cuda.shared.array(256, float32);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  const row = cuda.blockIdx.y * 16 + ty, col = cuda.blockIdx.x * 16 + tx;
  let acc = float32(0);
  for (let t = 0; t < n; t += 16) {
    sA[ty * 16 + tx] = row < n && t + tx < n ? A[row * n + t + tx] : 0;
    sB[ty * 16 + tx] = col < n && t + ty < n ? B[(t + ty) * n + col] : 0;
    cuda.syncthreads();
    for (let k = 0; k < 16; k++) acc += sA[ty * 16 + k] * sB[k * 16 + tx];
    cuda.syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
});

const n = 40;
const A = Float32Array.from({ length: n * n }, (_, i) => (i % 7) - 3);
const B = Float32Array.from({ length: n * n }, (_, i) => (i % 5) * 0.5);
const C = new Float32Array(n * n);
const blocks = Math.ceil(n / TILE);
await matmul.configure([blocks, blocks], [TILE, TILE]).async(A, B, C, n);

let worst = 0;
for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) {
  let s = 0;
  for (let k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
  worst = Math.max(worst, Math.abs(s - C[r * n + c]));
}
console.log("C[0, 0..5]:", C.subarray(0, 6));
console.log("largest difference from the host:", worst);
`;

const reduction = `// Sum reduction: each block sums its slice in shared memory (a tree, a barrier per level),
// then adds its partial sum to the total with an atomic.
const TPB = 256;
const blockSum = cuda.jit((x, total) => {
  const s = cuda.shared.array(256, float32);
  const t = cuda.threadIdx.x;
  const i = cuda.grid(1);
  s[t] = i < x.length ? x[i] : 0;
  cuda.syncthreads();
  for (let stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    cuda.syncthreads();
  }
  if (t === 0) cuda.atomic.add(total, 0, s[0]);
});

const n = 100000;
const x = Float32Array.from({ length: n }, (_, i) => (i % 10) * 0.25);
const total = new Float32Array(1);
await blockSum.configure(Math.ceil(n / TPB), TPB).async(x, total);

const host = x.reduce((s, v) => s + v, 0);
console.log("device sum:", total[0], " host sum:", host);
`;

const normalisation = `// Row normalisation (as in layer norm): one block per row; the threads sum the row's values
// and squares in shared memory, then each scales its elements to mean 0 and variance 1.
const TPB = 64;
const normalise = cuda.jit((x, y, cols) => {
  const sum = cuda.shared.array(64, float32);
  const sq = cuda.shared.array(64, float32);
  const row = cuda.blockIdx.x, t = cuda.threadIdx.x;
  let s = float32(0), q = float32(0);
  for (let c = t; c < cols; c += 64) {
    const v = x[row * cols + c];
    s += v;
    q += v * v;
  }
  sum[t] = s;
  sq[t] = q;
  cuda.syncthreads();
  for (let stride = 32; stride > 0; stride >>= 1) {
    if (t < stride) {
      sum[t] += sum[t + stride];
      sq[t] += sq[t + stride];
    }
    cuda.syncthreads();
  }
  const mean = sum[0] / cols;
  const inv = 1 / Math.sqrt(sq[0] / cols - mean * mean + 1e-5);
  for (let c = t; c < cols; c += 64) y[row * cols + c] = (x[row * cols + c] - mean) * inv;
});

const rows = 4, cols = 300;
const x = Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i) * 3 + (i % cols) * 0.01);
const y = new Float32Array(rows * cols);
await normalise.configure(rows, TPB).async(x, y, cols);

for (let r = 0; r < rows; r++) {
  const row = y.subarray(r * cols, (r + 1) * cols);
  const mean = row.reduce((s, v) => s + v, 0) / cols;
  const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / cols;
  console.log(\`row \${r}: mean \${mean.toFixed(6)}, variance \${variance.toFixed(4)}\`);
}
`;

export const EXAMPLES: readonly Example[] = [
  { name: "vector-add", title: "Vector add", code: vectorAdd },
  { name: "matmul", title: "Matrix multiply (shared-memory tiles)", code: matmul },
  { name: "reduction", title: "Reduction (shared memory, atomics)", code: reduction },
  { name: "normalisation", title: "Row normalisation", code: normalisation },
];
