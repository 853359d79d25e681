// C = A·B through 16×16 tiles of A and B in workgroup memory (Numba's `fast_matmul`, bench/gpu.ts
// `matmulTiled`): one invocation per element of C, one tile of each per step along k.
const TPB = 16u;

struct Dims { m: u32, k: u32, n: u32 }

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

var<workgroup> sA: array<array<f32, TPB>, TPB>;
var<workgroup> sB: array<array<f32, TPB>, TPB>;

@compute @workgroup_size(TPB, TPB)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let x = gid.x;
  let y = gid.y;
  let tx = lid.x;
  let ty = lid.y;
  var tmp = 0.0;
  for (var i = 0u; i < groups.x; i++) {
    sA[ty][tx] = 0.0;
    sB[ty][tx] = 0.0;
    if (y < dims.m && tx + i * TPB < dims.k) {
      sA[ty][tx] = A[y * dims.k + tx + i * TPB];
    }
    if (x < dims.n && ty + i * TPB < dims.k) {
      sB[ty][tx] = B[(ty + i * TPB) * dims.n + x];
    }
    workgroupBarrier();
    for (var j = 0u; j < TPB; j++) {
      tmp += sA[ty][j] * sB[j][tx];
    }
    workgroupBarrier();
  }
  if (y < dims.m && x < dims.n) {
    C[y * dims.n + x] = tmp;
  }
}
